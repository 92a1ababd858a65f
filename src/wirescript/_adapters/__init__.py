"""The adapters between a client library and the core's neutral request and answer (`wirescript._exchange`).

`http` serves httpx and httpx2 requests (the transport's `handle_request`), `botocore` boto3's and
aiobotocore's (`ScriptTransport.attach`), `asgi` the loopback server's, and `aiohttp` the requests
`intercept()` catches in aiohttp sessions. Each is thin: it reads its library's request into a `Request`
and writes the core's `Answer` back in its library's terms.
"""
