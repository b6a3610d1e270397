"""The browser door (``ansi2048 serve --http HOST:PORT``): a page with a
terminal (xterm.js, vendored in ``static/vendor``) whose WebSocket is an
ordinary session of the SSH server: the same command table, limits, store,
claims and log.

``protocol``: what the page and the server say to each other over the
socket, and the checks on a request (pure). ``socket``: the WebSocket as the
SSH channel and connection a session drives (:class:`.socket.SocketChannel`),
and the loop that serves one. ``site``: the aiohttp application, its
headers and errors, started and stopped with the SSH server.
"""
