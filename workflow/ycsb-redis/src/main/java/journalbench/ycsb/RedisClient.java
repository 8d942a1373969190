package journalbench.ycsb;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's DB interface on Redis, storing records as the upstream Redis binding does: a record is
 * a hash (HSET key field value ...) and its key is also added to the sorted set "_indices",
 * scored by the key's Java hash code, which is what SCAN walks. An insert is thus two writes,
 * as in the thesis's runs. Properties: redis.socket (a unix socket path), or redis.host and
 * redis.port (default 127.0.0.1:6379).
 */
public class RedisClient extends DB {
  static final String INDEX_KEY = "_indices";
  static final String PROPERTIES = "ycsb-redis.properties";

  private Connection connection;

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    String socket = props.getProperty("redis.socket");
    String where = socket != null ? socket
        : props.getProperty("redis.host", "127.0.0.1") + ":" + props.getProperty("redis.port", "6379");
    try {
      connection = socket != null ? Connection.unix(Path.of(socket))
          : Connection.tcp(props.getProperty("redis.host", "127.0.0.1"),
              Integer.parseInt(props.getProperty("redis.port", "6379")));
      Object pong = connection.call("PING");
      if (!"PONG".equals(pong)) {
        throw new DBException("Redis at " + where + " answered PING with " + describe(pong));
      }
    } catch (IOException e) {
      throw new DBException("cannot reach Redis at " + where + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (connection != null) {
      try {
        connection.close();
      } catch (IOException e) {
        throw new DBException(e);
      }
    }
  }

  static double hash(String key) {
    return key.hashCode();
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    try {
      if (fields == null) {
        Object reply = connection.call("HGETALL", key);
        if (!(reply instanceof List<?> items)) {
          return Status.ERROR;
        }
        for (int i = 0; i + 1 < items.size(); i += 2) {
          result.put(text(items.get(i)), new ByteArrayByteIterator((byte[]) items.get(i + 1)));
        }
      } else {
        List<String> names = new ArrayList<>(fields);
        List<byte[]> args = new ArrayList<>();
        args.add(bytes("HMGET"));
        args.add(bytes(key));
        for (String name : names) {
          args.add(bytes(name));
        }
        Object reply = connection.call(args);
        if (!(reply instanceof List<?> items)) {
          return Status.ERROR;
        }
        for (int i = 0; i < names.size(); i++) {
          if (items.get(i) instanceof byte[] value) {
            result.put(names.get(i), new ByteArrayByteIterator(value));
          }
        }
      }
      return result.isEmpty() ? Status.ERROR : Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      if (!(hset(key, values) instanceof Long)) {
        return Status.ERROR;
      }
      Object added = connection.call("ZADD", INDEX_KEY, Double.toString(hash(key)), key);
      return added instanceof Long ? Status.OK : Status.ERROR;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      return hset(key, values) instanceof Long ? Status.OK : Status.ERROR;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      Object removed = connection.call("DEL", key);
      Object unindexed = connection.call("ZREM", INDEX_KEY, key);
      if (!(removed instanceof Long r) || !(unindexed instanceof Long u)) {
        return Status.ERROR;
      }
      return r == 0 && u == 0 ? Status.NOT_FOUND : Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      Object reply = connection.call("ZRANGEBYSCORE", INDEX_KEY, Double.toString(hash(startkey)),
          "+inf", "LIMIT", "0", Integer.toString(recordcount));
      if (!(reply instanceof List<?> keys)) {
        return Status.ERROR;
      }
      for (Object key : keys) {
        HashMap<String, ByteIterator> values = new HashMap<>();
        Status status = read(table, text(key), fields, values);
        if (!status.isOk()) {
          return status;
        }
        result.add(values);
      }
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  private Object hset(String key, Map<String, ByteIterator> values) throws IOException {
    List<byte[]> args = new ArrayList<>(2 + 2 * values.size());
    args.add(bytes("HSET"));
    args.add(bytes(key));
    for (Map.Entry<String, ByteIterator> field : values.entrySet()) {
      args.add(bytes(field.getKey()));
      args.add(field.getValue().toArray());
    }
    return connection.call(args);
  }

  /** The binding's version and source hash, as the build recorded them. */
  public static Properties buildInfo() throws IOException {
    Properties info = new Properties();
    try (InputStream in = RedisClient.class.getClassLoader().getResourceAsStream(PROPERTIES)) {
      if (in == null) {
        throw new IOException(PROPERTIES + " is not on the class path");
      }
      info.load(in);
    }
    return info;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(Object reply) {
    return reply instanceof byte[] data ? new String(data, StandardCharsets.UTF_8)
        : String.valueOf(reply);
  }

  private static String describe(Object reply) {
    return reply instanceof Resp.Error error ? "error " + error.message() : text(reply);
  }
}
