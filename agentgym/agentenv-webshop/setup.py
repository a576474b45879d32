from setuptools import setup

setup(
    name="agentenv-webshop",
    version="0.1.0",
    description="WebShop (search and click through a store to buy what an instruction asks) for agentenv servers",
    packages=["agentenv_webshop"],
    python_requires=">=3.10",
    install_requires=["agentenv", "bm25s==0.3.16", "numpy>=2.0", "pydantic==2.14.3",
                      # the agentgym profile: WebShop's fuzzy matching, and py4j to talk to Lucene's JVM
                      "thefuzz==0.19.0", "python-Levenshtein==0.27.5", "py4j==0.10.9.9"],
    entry_points={"agentenv.envs": ["webshop = agentenv_webshop.env:WebShopEnv"]},
)
