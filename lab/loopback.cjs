// Preloaded (`node --require lab/loopback.cjs ...`) into a Node server that has no host option,
// as the Portkey gateway 1.15.2 (it calls `listen(port)`, which binds every interface): every
// TCP `listen()` of the process is made to bind 127.0.0.1, whatever host it asked for, so the
// lab's servers stay on loopback. A listen on a Unix socket path or a handle is left alone.
"use strict";

const net = require("net");

const LOOPBACK = "127.0.0.1";
const original = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0];
  const callback = typeof args[args.length - 1] === "function" ? args[args.length - 1] : undefined;
  let options;
  if (first !== null && typeof first === "object" && !first._handle && !("fd" in first)
      && !("path" in first)) {
    options = { ...first, host: LOOPBACK };
  } else if (isPort(first) || first === undefined || first === null
             || typeof first === "function") {
    options = { port: isPort(first) ? Number(first) : 0, host: LOOPBACK };
  } else {
    return original.apply(this, args); // a Unix socket path, a handle, an fd
  }
  delete options.ipv6Only;
  return callback ? original.call(this, options, callback) : original.call(this, options);
};
