package journalbench.ycsb;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * RESP2, the Redis protocol: a command is an array of bulk strings; a reply is a simple string
 * (String), an error ({@link Error}), an integer (Long), a bulk string (byte[], null for nil) or
 * an array (List, null for nil).
 */
final class Resp {
  private Resp() {}

  /** An error reply ("-ERR ..."): a value, not an exception, so the caller decides. */
  record Error(String message) {}

  static byte[] encode(List<byte[]> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeLine(out, "*" + args.size());
    for (byte[] arg : args) {
      writeLine(out, "$" + arg.length);
      out.writeBytes(arg);
      writeLine(out, "");
    }
    return out.toByteArray();
  }

  static void write(OutputStream out, List<byte[]> args) throws IOException {
    out.write(encode(args));
    out.flush();
  }

  private static void writeLine(ByteArrayOutputStream out, String line) {
    out.writeBytes(line.getBytes(StandardCharsets.US_ASCII));
    out.write('\r');
    out.write('\n');
  }

  static Object read(InputStream in) throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new EOFException("connection closed by Redis");
    }
    String line = readLine(in);
    switch (type) {
      case '+':
        return line;
      case '-':
        return new Error(line);
      case ':':
        return Long.parseLong(line);
      case '$': {
        int length = Integer.parseInt(line);
        if (length < 0) {
          return null;
        }
        byte[] data = in.readNBytes(length);
        if (data.length != length || in.read() != '\r' || in.read() != '\n') {
          throw new EOFException("truncated bulk string");
        }
        return data;
      }
      case '*': {
        int count = Integer.parseInt(line);
        if (count < 0) {
          return null;
        }
        List<Object> items = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          items.add(read(in));
        }
        return items;
      }
      default:
        throw new IOException("not a RESP reply: type byte " + type);
    }
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int c = in.read();
      if (c < 0) {
        throw new EOFException("truncated reply line");
      }
      if (c == '\r') {
        if (in.read() != '\n') {
          throw new IOException("reply line without \\r\\n");
        }
        return line.toString(StandardCharsets.UTF_8);
      }
      line.write(c);
    }
  }
}
