package journalbench.ycsb;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** One connection to Redis, over TCP or a unix socket; one command at a time. */
final class Connection implements Closeable {
  private final Closeable transport;
  private final InputStream in;
  private final OutputStream out;

  private Connection(Closeable transport, InputStream in, OutputStream out) {
    this.transport = transport;
    this.in = new BufferedInputStream(in, 1 << 16);
    this.out = new BufferedOutputStream(out, 1 << 16);
  }

  static Connection unix(Path socket) throws IOException {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    return new Connection(channel, Channels.newInputStream(channel),
        Channels.newOutputStream(channel));
  }

  static Connection tcp(String host, int port) throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port));
      return new Connection(socket, socket.getInputStream(), socket.getOutputStream());
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  /** Send one command and return its reply (see {@link Resp}). */
  Object call(List<byte[]> args) throws IOException {
    Resp.write(out, args);
    return Resp.read(in);
  }

  Object call(String... args) throws IOException {
    List<byte[]> bytes = new ArrayList<>(args.length);
    for (String arg : args) {
      bytes.add(arg.getBytes(StandardCharsets.UTF_8));
    }
    return call(bytes);
  }

  @Override
  public void close() throws IOException {
    transport.close();
  }
}
