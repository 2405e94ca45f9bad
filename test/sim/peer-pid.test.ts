/** The simulator finds the process at the other end of a TCP connection (what kill-client uses for wine clients). */
import { spawn } from 'child_process';
import * as net from 'net';
import { tcpPeerPid } from '../../src/sim/peer-pid';

it('names the child process that holds the client end of the connection', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const connected = new Promise<net.Socket>((r) => server.once('connection', r));
  const child = spawn(
    process.execPath,
    ['-e', `require('net').connect(${port}, '127.0.0.1'); setTimeout(() => {}, 30000)`],
    { stdio: 'ignore' },
  );
  try {
    const socket = await connected;
    expect(tcpPeerPid(socket.remotePort!)).toBe(child.pid);
    expect(tcpPeerPid(1)).toBeUndefined(); // nobody's port
    socket.destroy();
  } finally {
    child.kill('SIGKILL');
    server.close();
  }
});
