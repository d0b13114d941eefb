package io.jhca.cm;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import io.jhca.cm.ib.ConnectionManager;
import io.jhca.cm.ib.GsiPort;
import io.jhca.verbs.Context;

/**
 * The connection manager of one device: its QP1 ({@link GsiPort}), the IB CM ({@link ConnectionManager}) and a
 * daemon thread that receives MADs and fires timers. Calls from applications take the same lock.
 *
 * <p>The thread looks every {@value #BUSY_PARK_MICROS} us while MADs come or an application has just called the CM,
 * and backs off, doubling, to every {@value #IDLE_PARK_MILLIS} ms once nothing has come for a while (never past the
 * next CM timer). A connection spends its life established with no MAD at all, and a wake every 200 us on a small
 * machine took a core from the threads that move its data: perftest's write-lat over rdma_cm between two processes
 * on two cores averaged 20-71 us a round trip against 6-14 over a TCP exchange, the same data path. An idle look
 * still drives a device in caller progress mode, whose MADs nobody else may receive; the first MAD after a quiet
 * spell then waits up to {@value #IDLE_PARK_MILLIS} ms, far inside the CM's response timeouts.
 */
final class CmAgent implements AutoCloseable {
    static final long BUSY_PARK_MICROS = 200;
    static final long IDLE_PARK_MILLIS = 10;
    private static final long BUSY_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(BUSY_PARK_MICROS);
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(IDLE_PARK_MILLIS);
    /** The shortest park before a due timer, so that a deadline in the past cannot make the thread spin. */
    private static final long MIN_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(10);

    private final Context context;
    private final GsiPort gsi;
    private final ConnectionManager cm;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread thread;
    private volatile boolean running = true;
    /** Set by an application's call (its MADs' answers are due soon): the thread looks often again. */
    private volatile boolean called;
    /** Times the thread has looked (for tests: an idle agent looks seldom). */
    private volatile long looks;

    CmAgent(Context context) {
        this.context = context;
        this.gsi = new GsiPort(context);
        this.cm = new ConnectionManager(gsi::send, context.queryDevice().nodeGuid());
        cm.gidIndexer(g -> CmDevices.gidIndex(context, g));
        this.thread = new Thread(this::run, "jhca-cm-" + context.name());
        thread.setDaemon(true);
        thread.start();
    }

    Context context() {
        return context;
    }

    ConnectionManager cm() {
        return cm;
    }

    void lock() {
        lock.lock();
    }

    /** Ends an application's call: the thread looks at once and then often (see the class comment). */
    void unlock() {
        lock.unlock();
        if (Thread.currentThread() != thread) {
            called = true;
            LockSupport.unpark(thread);
        }
    }

    long looks() {
        return looks;
    }

    private void run() {
        long park = BUSY_PARK_NANOS;
        while (running) {
            int n;
            long next = Long.MAX_VALUE;
            lock.lock();
            try {
                long now = System.nanoTime();
                n = gsi.poll(r -> cm.deliver(r.mad(), r.source(), now));
                next = cm.tick(System.nanoTime());
            } catch (RuntimeException e) {
                if (!running || context.isClosed()) {
                    return;
                }
                System.err.println("jhca cm " + context.name() + ": " + e);
                n = 0;
            } finally {
                lock.unlock();
            }
            looks++;
            if (n > 0 || called) {
                called = false;
                park = BUSY_PARK_NANOS;
                if (n > 0) {
                    continue;
                }
            }
            long untilTimer = next == Long.MAX_VALUE ? Long.MAX_VALUE : next - System.nanoTime();
            LockSupport.parkNanos(Math.max(MIN_PARK_NANOS, Math.min(park, untilTimer)));
            park = Math.min(park * 2, IDLE_PARK_NANOS);
        }
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread); // an idle thread parks up to IDLE_PARK_MILLIS
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            if (!context.isClosed()) {
                gsi.close();
            }
        } finally {
            lock.unlock();
        }
    }
}
