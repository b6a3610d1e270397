// The browser door: a terminal (xterm.js) on one WebSocket to the game
// server, whose session it is like an SSH client's. Up, text messages tagged
// by their first character: "i" keys, "r" COLSxROWS, "p" pause, "c" continue.
// Down: binary messages (the terminal's output) and "x" STATUS at the end.
"use strict";
(function () {
  // Unrendered output (bytes written to the terminal, not yet drawn) past
  // HIGH asks the server to pause; under LOW, to continue. The server keeps
  // what it holds, and drops a page that holds too much for too long, as it
  // drops an SSH client that stops reading.
  const HIGH = 256 * 1024;
  const LOW = 32 * 1024;
  // A 4x4 board in the "big" layout (tiles three lines tall, easy to read
  // on a phone) needs 43 columns: the font is as large as 44 allow, within
  // reason (a monospace glyph is about 0.6 of the font's size wide).
  const WANTED_COLUMNS = 44;
  const SWIPE_PIXELS = 24;
  const ARROWS = { up: "\x1b[A", down: "\x1b[B", right: "\x1b[C", left: "\x1b[D" };

  const element = document.getElementById("terminal");
  // A phone's soft keyboard would cover the board: the terminal takes the
  // focus by itself only where there is a real keyboard (a fine pointer).
  const keyboard = !window.matchMedia("(pointer: coarse)").matches;
  const ended = document.getElementById("ended");
  const endedText = document.getElementById("ended-text");

  function fontSize() {
    const width = element.clientWidth || window.innerWidth;
    return Math.max(10, Math.min(18, Math.floor(width / WANTED_COLUMNS / 0.61)));
  }

  const term = new Terminal({
    fontSize: fontSize(),
    fontFamily: "DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace",
    cursorBlink: false,
    scrollback: 0,
    theme: { background: "#000000" },
  });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(element);
  fit.fit();
  window.term = term; // for tests, extensions and accessibility tools

  let socket = null;
  let unrendered = 0;
  let paused = false;

  function send(text) {
    if (socket !== null && socket.readyState === WebSocket.OPEN) {
      socket.send(text);
    }
  }

  function sendSize() {
    send("r" + term.cols + "x" + term.rows);
  }

  function written(length) {
    unrendered -= length;
    if (paused && unrendered < LOW) {
      paused = false;
      send("c");
    }
  }

  function connect() {
    ended.hidden = true;
    unrendered = 0;
    paused = false;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    // ?command=daily plays the day's game (any command of ssh HOST COMMAND's).
    const command = new URLSearchParams(location.search).get("command");
    const query = command ? "?command=" + encodeURIComponent(command) : "";
    const opened = new WebSocket(scheme + location.host + "/socket" + query);
    opened.binaryType = "arraybuffer";
    socket = opened;
    opened.onopen = sendSize;
    opened.onmessage = function (event) {
      if (typeof event.data === "string") {
        if (event.data.charAt(0) === "x") {
          finish(event.data.slice(1) === "0" ? "" : " (status " + event.data.slice(1) + ")");
        }
        return;
      }
      const data = new Uint8Array(event.data);
      unrendered += data.length;
      term.write(data, function () { written(data.length); });
      if (!paused && unrendered > HIGH) {
        paused = true;
        send("p");
      }
    };
    opened.onclose = function () {
      if (socket === opened) {
        finish("");
      }
    };
  }

  function finish(how) {
    socket = null;
    endedText.textContent = "The session has ended" + how + ".";
    ended.hidden = false;
    document.getElementById("again").focus();
  }

  document.getElementById("again").addEventListener("click", function () {
    term.reset();
    connect();
    if (keyboard) {
      term.focus();
    }
  });

  term.onData(function (data) { send("i" + data); });
  term.onResize(sendSize);

  // The window's size changes: the font for the new width, then the
  // terminal fitted to it (one refit a frame, however many events).
  let refit = 0;
  window.addEventListener("resize", function () {
    if (refit === 0) {
      refit = window.requestAnimationFrame(function () {
        refit = 0;
        const size = fontSize();
        if (term.options.fontSize !== size) {
          term.options.fontSize = size;
        }
        fit.fit();
      });
    }
  });

  // A swipe on the board is the arrow key of its direction.
  let start = null;
  element.addEventListener("touchstart", function (event) {
    if (event.touches.length === 1) {
      start = { x: event.touches[0].clientX, y: event.touches[0].clientY };
    }
  }, { passive: true });
  element.addEventListener("touchmove", function (event) {
    event.preventDefault(); // no scrolling, no pull-to-refresh
  }, { passive: false });
  element.addEventListener("touchend", function (event) {
    if (start === null || event.changedTouches.length !== 1) {
      return;
    }
    const dx = event.changedTouches[0].clientX - start.x;
    const dy = event.changedTouches[0].clientY - start.y;
    start = null;
    if (Math.max(Math.abs(dx), Math.abs(dy)) < SWIPE_PIXELS) {
      return; // a tap: xterm.js's own (focus, the soft keyboard)
    }
    if (Math.abs(dx) > Math.abs(dy)) {
      send("i" + (dx > 0 ? ARROWS.right : ARROWS.left));
    } else {
      send("i" + (dy > 0 ? ARROWS.down : ARROWS.up));
    }
  });

  for (const button of document.querySelectorAll("#buttons button")) {
    button.addEventListener("click", function () {
      send("i" + button.dataset.key);
      if (keyboard) {
        term.focus(); // the keys go on to the game, not to the button
      }
    });
  }

  connect();
  if (keyboard) {
    term.focus();
  }
})();
