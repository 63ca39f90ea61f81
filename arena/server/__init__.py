"""The competition server (``arena server``): uploads over HTTP, a ladder that runs itself, live views.

An edge of the project like the CLI: it may import everything, nothing imports it. Its web
parts need the ``server`` extra (Starlette, uvicorn, python-multipart).
"""
