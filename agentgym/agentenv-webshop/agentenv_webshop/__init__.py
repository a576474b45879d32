"""agentenv-webshop: the ``webshop`` environment (WebShop, Yao et al. 2022) for agentenv servers."""

from agentenv_webshop.env import WebShopEnv

__all__ = ["WebShopEnv"]
