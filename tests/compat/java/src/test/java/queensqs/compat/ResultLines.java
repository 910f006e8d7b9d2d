package queensqs.compat;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * One line per test as it ends, PASS / FAIL / SKIP with its time (and the failure's first line), so
 * the log of scripts/compat.sh shows each test's verdict; Surefire's summary line ("Tests run: N,
 * Failures: F, ...") follows at the end. Registered through META-INF/services, as the JUnit
 * Platform launcher finds listeners.
 */
public final class ResultLines implements TestExecutionListener {
  private final Map<String, Long> started = new ConcurrentHashMap<>();

  @Override
  public void executionStarted(TestIdentifier id) {
    if (id.isTest()) {
      started.put(id.getUniqueId(), System.nanoTime());
    }
  }

  @Override
  public void executionSkipped(TestIdentifier id, String reason) {
    if (id.isTest()) {
      print("SKIP", id, 0, reason);
    }
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    if (!id.isTest()) {
      return;
    }
    Long start = started.remove(id.getUniqueId());
    long nanos = start == null ? 0 : System.nanoTime() - start;
    String verdict =
        switch (result.getStatus()) {
          case SUCCESSFUL -> "PASS";
          case FAILED -> "FAIL";
          case ABORTED -> "SKIP";
        };
    String why =
        result
            .getThrowable()
            .map(t -> t.getClass().getSimpleName() + ": " + firstLine(t.getMessage()))
            .orElse(null);
    print(verdict, id, nanos, why);
  }

  private static String firstLine(String s) {
    if (s == null) return "";
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl) + " ...";
  }

  private static void print(String verdict, TestIdentifier id, long nanos, String why) {
    String name =
        id.getSource()
            .filter(MethodSource.class::isInstance)
            .map(MethodSource.class::cast)
            .map(m -> m.getJavaClass().getSimpleName() + "." + m.getMethodName())
            .orElse(id.getDisplayName());
    StringBuilder line =
        new StringBuilder(String.format("    %s %s (%.2f s)", verdict, name, nanos / 1e9));
    if (why != null) {
      line.append(": ").append(why);
    }
    System.out.println(line);
  }
}
