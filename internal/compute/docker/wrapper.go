package docker

// wrapperScript is the gateway container's first process (`node -e
// wrapperScript <relayPort> <gatewayPort> <entrypoint…> gateway run --port
// N`): it runs the image's entry point (the OpenClaw CLI) as its child,
// forwards SIGTERM and SIGINT to it (SIGKILL 8 s later), exits with its
// code, and relays TCP connections from every interface's relayPort to the
// gateway on 127.0.0.1:gatewayPort.
//
// The relay is why occ reaches the gateway as "direct loopback": the
// gateway gives a device-less backend client (occ's) its scopes only on
// direct loopback, and a connection through the engine's published port
// arrives from the bridge's address. The gateway itself listens on
// loopback only; the relay is the one way in, and it still needs the
// token.
const wrapperScript = `'use strict';
const net = require('net'), { spawn } = require('child_process');
const [relayPort, gatewayPort, cmd, ...args] = process.argv.slice(1);
const child = spawn(cmd, args, { stdio: 'inherit' });
child.on('error', (e) => { console.error('occ wrapper: ' + e.message); process.exit(127); });
child.on('exit', (code, sig) => process.exit(code === null ? 128 : code));
for (const s of ['SIGTERM', 'SIGINT']) {
  process.on(s, () => { child.kill(s); setTimeout(() => child.kill('SIGKILL'), 8000).unref(); });
}
net.createServer((c) => {
  const g = net.connect(Number(gatewayPort), '127.0.0.1');
  c.on('error', () => g.destroy()); g.on('error', () => c.destroy());
  c.pipe(g).pipe(c);
}).listen(Number(relayPort), '0.0.0.0');
`
