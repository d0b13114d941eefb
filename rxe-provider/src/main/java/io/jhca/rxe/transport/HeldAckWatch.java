package io.jhca.rxe.transport;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The caller-progress engines' safety net for held ACKs. A held ACK leaves by time in an engine cycle, and with caller
 * progress a cycle is the application's progress call. An application that took its last message and stopped calling
 * progress (it waits for its peer over TCP, sleeps, tears down in another order) would leave the peer's last request
 * unacknowledged, its send never completing, until the QP is destroyed; a responder that acknowledges at once never
 * does that. One daemon thread for the whole process ({@link #SHARED}) looks while ACKs are being held and, at each
 * engine whose application has made no progress call for {@link #QUIET_NANOS}, takes the engine's lock (if no call
 * holds it) and sends the ACKs held past their time. It looks {@link #FIRST_LOOK_NANOS} after it found something to
 * send, and twice as long after each look that found nothing, up to {@link #LONGEST_LOOK_NANOS}: an application that
 * keeps calling progress sends its ACKs itself, and a wake-up on a busy core delays one of its round trips, so while
 * it does the thread wakes about 60 times a second, however many devices the process has, and an ACK is late by at
 * most the quiet time and that longest period. It parks after {@link #IDLE_NANOS} without a hold, and the next hold
 * wakes it. The data path pays a volatile store per hold and a volatile load; the thread starts with the first hold,
 * so a process whose devices hold nothing has none.
 */
final class HeldAckWatch implements Runnable {

    /** The period after a look that sent something. */
    static final long FIRST_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * The longest period: far below any retransmit timer a peer arms in practice (perftest's and rc_pingpong's code
     * 14: 67 ms; rdma_cm's larger).
     */
    static final long LONGEST_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(16);
    /**
     * How long the application must have made no progress call before the thread takes the engine. While progress
     * calls come, the application's own cycles send the ACKs that fall due. Without this wait the thread took the lock
     * between two of them: in a default write-lat it found an ACK due at about one look in four (its own wake-up had
     * taken the CPU from the thread that would have sent it) and sent it, 16-350 us with the lock held (code run too
     * rarely to be compiled), while the application's next progress call waited for the lock.
     */
    static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long without a new hold before it parks until the next one. */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The process's one watch. A thread per device woke its own ~60 times a second: two devices in one process (the
     * lab tools' in-process runs) had two threads waking on cores their measuring threads were using.
     */
    static final HeldAckWatch SHARED = new HeldAckWatch();

    /** The caller-progress engines that have held an ACK, until they close. */
    private final CopyOnWriteArrayList<Engine> engines = new CopyOnWriteArrayList<>();
    private volatile Thread thread;
    /** System.nanoTime of the latest hold, of any engine. */
    private volatile long lastHold;
    /** True while the thread is parked until the next hold (or about to be). */
    private volatile boolean idle = true;
    private final Object startLock = new Object();
    /** The watch thread's current period between looks. */
    private long period = FIRST_LOOK_NANOS;

    private HeldAckWatch() {
    }

    /** An engine that holds ACKs starts to be watched (its first hold); until {@link #remove}. */
    void add(final Engine engine) {
        engines.addIfAbsent(engine);
    }

    /** The engine closed: not watched any more. */
    void remove(final Engine engine) {
        engines.remove(engine);
    }

    /** Engine, when an ACK starts to be held: records the time and wakes (or starts) the thread if it is idle. */
    void held(final long now) {
        lastHold = now;
        if (idle) {
            wake();
        }
    }

    private void wake() {
        Thread t = thread;
        if (t == null) {
            synchronized (startLock) {
                t = thread;
                if (t == null) {
                    t = new Thread(this, "jhca-rxe-held-acks");
                    t.setDaemon(true);
                    thread = t;
                    idle = false;
                    t.start();
                    return;
                }
            }
        }
        idle = false;
        LockSupport.unpark(t);
    }

    @Override
    public void run() {
        while (true) {
            if (idle) {
                LockSupport.park(this);
                continue;
            }
            LockSupport.parkNanos(this, period);
            final long now = System.nanoTime();
            int released = 0;
            for (final Engine e : engines) {
                if (e.isClosed()) {
                    engines.remove(e);   // one that held its first ACK as it closed, after its remove
                    continue;
                }
                // while progress calls come, the application's own cycles send what falls due
                if (now - e.lastCycleNanos() >= QUIET_NANOS) {
                    released += e.releaseDueHeldAcks(now);
                }
            }
            period = released > 0 ? FIRST_LOOK_NANOS : Math.min(2 * period, LONGEST_LOOK_NANOS);
            if (now - lastHold > IDLE_NANOS) {
                idle = true;
                // a hold that came between the read of lastHold and the store of idle saw idle false: look again
                if (System.nanoTime() - lastHold <= IDLE_NANOS) {
                    idle = false;
                }
            }
        }
    }
}
