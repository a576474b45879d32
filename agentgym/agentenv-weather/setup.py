from setuptools import setup

setup(
    name="agentenv-weather",
    version="0.1.0",
    description="AgentGym's weather tools over a generated, deterministic weather archive, for agentenv servers",
    packages=["agentenv_weather"],
    python_requires=">=3.10",
    install_requires=["agentenv", "geographiclib==2.1"],
    entry_points={"agentenv.envs": ["weather = agentenv_weather.env:WeatherEnv"]},
)
