from setuptools import find_packages, setup

setup(
    name="agentenv",
    version="0.1.0",
    description="Protocol v1 runtime, client, registry and CLI for AgentGym-style environment servers",
    packages=find_packages(include=["agentenv", "agentenv.*"]),
    package_data={"agentenv": ["templates/package/*.tmpl", "templates/package/tests/*.tmpl",
                               "templates/package_tool/*.tmpl", "templates/package_tool/tests/*.tmpl"]},
    python_requires=">=3.10",
    install_requires=[
        "fastapi>=0.110",
        "uvicorn[standard]>=0.29",  # brings uvloop and httptools
        "httpx>=0.27",
        "websockets>=13",  # OpenEnv servers driven here (agentenv.interop.openenv_client)
        "pydantic>=2.6",
        "tqdm>=4.66",
    ],
    extras_require={"ray": ["ray>=2.40"]},  # the ray server backend (agentenv.ray_servers)
    entry_points={"console_scripts": ["agentenv = agentenv.cli:main"]},
)
