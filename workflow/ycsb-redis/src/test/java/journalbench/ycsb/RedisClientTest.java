package journalbench.ycsb;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

import site.ycsb.ByteIterator;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The binding against a real redis-server on a private unix socket (no TCP port). */
public class RedisClientTest {
  private Path dir;
  private Path socket;
  private Process server;
  private RedisClient client;

  @Before
  public void startRedis() throws Exception {
    dir = Files.createTempDirectory("ycsb-redis-test");
    socket = dir.resolve("redis.sock");
    server = new ProcessBuilder("redis-server", "--port", "0", "--unixsocket", socket.toString(),
        "--save", "", "--appendonly", "no", "--dir", dir.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!Files.exists(socket)) {
      if (!server.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException("redis-server did not start: "
            + Files.readString(dir.resolve("redis.log")));
      }
      Thread.sleep(20);
    }
    client = connect(socket.toString());
  }

  @After
  public void stopRedis() throws Exception {
    if (client != null) {
      client.cleanup();
    }
    server.destroy();
    if (!server.waitFor(20, TimeUnit.SECONDS)) {
      server.destroyForcibly().waitFor();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }

  private static RedisClient connect(String socketPath) throws DBException {
    RedisClient db = new RedisClient();
    Properties props = new Properties();
    props.setProperty("redis.socket", socketPath);
    db.setProperties(props);
    db.init();
    return db;
  }

  private static Map<String, ByteIterator> record(String... pairs) {
    Map<String, String> values = new HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      values.put(pairs[i], pairs[i + 1]);
    }
    return StringByteIterator.getByteIteratorMap(values);
  }

  private static Map<String, String> strings(Map<String, ByteIterator> values) {
    Map<String, String> out = new HashMap<>();
    values.forEach((k, v) -> out.put(k, v.toString()));
    return out;
  }

  @Test
  public void insertReadUpdateDelete() {
    assertEquals(Status.OK, client.insert("usertable", "user1", record("f0", "a", "f1", "b")));
    Map<String, ByteIterator> all = new HashMap<>();
    assertEquals(Status.OK, client.read("usertable", "user1", null, all));
    assertEquals(Map.of("f0", "a", "f1", "b"), strings(all));

    assertEquals(Status.OK, client.update("usertable", "user1", record("f1", "c")));
    Map<String, ByteIterator> one = new HashMap<>();
    assertEquals(Status.OK, client.read("usertable", "user1", Set.of("f1", "nope"), one));
    assertEquals(Map.of("f1", "c"), strings(one));

    assertEquals(Status.OK, client.delete("usertable", "user1"));
    assertEquals(Status.ERROR, client.read("usertable", "user1", null, new HashMap<>()));
    assertEquals(Status.NOT_FOUND, client.delete("usertable", "user1"));
  }

  @Test
  public void scanWalksTheIndexFromTheStartKey() {
    for (String key : new String[] {"user1", "user2", "user3"}) {
      assertEquals(Status.OK, client.insert("usertable", key, record("f0", key)));
    }
    Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
    assertEquals(Status.OK, client.scan("usertable", "user2", 5, null, rows));
    assertEquals(2, rows.size());  // user2 and user3: hash codes grow with the last digit
    assertEquals("user2", rows.get(0).get("f0").toString());
  }

  @Test
  public void aRedisErrorIsAnErrorStatus() throws IOException {
    assertEquals("OK", Connection.unix(socket).call("SET", "user9", "not a hash"));
    assertEquals(Status.ERROR, client.insert("usertable", "user9", record("f0", "x")));
  }

  @Test
  public void noServerFailsInitNamingTheSocket() {
    DBException error = assertThrows(DBException.class,
        () -> connect(dir.resolve("absent.sock").toString()));
    assertTrue(error.getMessage(), error.getMessage().contains("absent.sock"));
  }

  @Test
  public void buildInfoNamesTheVersion() throws IOException {
    Properties info = RedisClient.buildInfo();
    assertEquals("0.17.0", info.getProperty("ycsb"));
    assertTrue(info.getProperty("version").matches("\\d+\\.\\d+\\.\\d+"));
  }
}
