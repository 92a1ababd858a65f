"""The start of a script that runs as a project without httpx, httpx2 or anyio would (a boto3-only one)."""

BLOCK_HTTPX = """
import importlib.abc
import sys


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("httpx", "httpx2", "anyio"):
            raise ImportError(f"{name} is blocked: a boto3-only project does not have it")
        return None


sys.meta_path.insert(0, Refuse())
"""
