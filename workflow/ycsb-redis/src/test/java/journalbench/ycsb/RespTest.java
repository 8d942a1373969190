package journalbench.ycsb;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.Test;

public class RespTest {
  private static Object parse(String wire) throws IOException {
    return Resp.read(new ByteArrayInputStream(wire.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  public void encodesACommandAsAnArrayOfBulkStrings() {
    byte[] wire = Resp.encode(List.of("HSET".getBytes(), "k".getBytes(), "f\r\n".getBytes()));
    assertEquals("*3\r\n$4\r\nHSET\r\n$1\r\nk\r\n$3\r\nf\r\n\r\n",
        new String(wire, StandardCharsets.UTF_8));
  }

  @Test
  public void readsEveryReplyType() throws IOException {
    assertEquals("PONG", parse("+PONG\r\n"));
    assertEquals(new Resp.Error("WRONGTYPE bad"), parse("-WRONGTYPE bad\r\n"));
    assertEquals(42L, parse(":42\r\n"));
    assertArrayEquals("a\r\nb".getBytes(), (byte[]) parse("$4\r\na\r\nb\r\n"));
    assertNull(parse("$-1\r\n"));
    assertNull(parse("*-1\r\n"));
    List<?> items = (List<?>) parse("*3\r\n:1\r\n$1\r\nx\r\n*0\r\n");
    assertEquals(1L, items.get(0));
    assertArrayEquals("x".getBytes(), (byte[]) items.get(1));
    assertTrue(((List<?>) items.get(2)).isEmpty());
  }

  @Test
  public void aTruncatedReplyIsAnError() {
    assertThrows(EOFException.class, () -> parse(""));
    assertThrows(EOFException.class, () -> parse("$5\r\nab"));
    assertThrows(EOFException.class, () -> parse("+OK"));
    assertThrows(IOException.class, () -> parse("?what\r\n"));
  }
}
