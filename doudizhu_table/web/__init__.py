"""The web table: play Dou Dizhu against agents in the browser, or step through recorded games.

Start it with ``python -m doudizhu_table.web`` (or the ``doudizhu-web`` command) and open the
address it prints. It needs the ``web`` extra (``pip install -e ".[web]"``: Starlette and
uvicorn). See ``docs/web.md``; the server is :mod:`doudizhu_table.web.server`, a game and what
the page may see of it :mod:`doudizhu_table.web.game`.
"""
