package io.jhca.rxe.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.jhca.verbs.WorkCompletion;

/**
 * The completion ring of a software CQ: preallocated {@link WorkCompletion} slots, one producer (the device's
 * engine) and one consumer (the thread polling the CQ). The producer fills a slot, then publishes it with a
 * release store of the producer index; the consumer reads the index with an acquire load, copies the slot out
 * and releases it with a release store of the consumer index. If the engine finds the ring full the CQ has
 * overrun: the flag stays set and every later poll reports it, so no completion is ever lost silently.
 */
public final class CqRing {

    private static final VarHandle PI;
    private static final VarHandle CI;

    static {
        try {
            final MethodHandles.Lookup l = MethodHandles.lookup();
            PI = l.findVarHandle(CqRing.class, "pi", long.class);
            CI = l.findVarHandle(CqRing.class, "ci", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final WorkCompletion[] slots;
    private final int mask;
    // producer side (engine)
    private long producerIndex;
    private long consumerIndexCache;
    @SuppressWarnings("unused") // through PI
    private volatile long pi;
    // consumer side (poller)
    private long consumerIndex;
    @SuppressWarnings("unused") // through CI
    private volatile long ci;
    private volatile boolean overrun;
    private Runnable overrunListener;
    /** {@link #DISARMED}, {@link #ARMED_NEXT} or {@link #ARMED_SOLICITED}; one plain load per commit when unarmed. */
    private volatile int armed;
    private Runnable eventListener;

    public static final int DISARMED = 0;
    public static final int ARMED_NEXT = 1;
    public static final int ARMED_SOLICITED = 2;
    private static final VarHandle ARMED;

    static {
        try {
            ARMED = MethodHandles.lookup().findVarHandle(CqRing.class, "armed", int.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A ring of at least {@code capacity} slots (rounded up to a power of two). */
    public CqRing(final int capacity) {
        int n = 1;
        while (n < capacity) {
            n <<= 1;
        }
        slots = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            slots[i] = new WorkCompletion();
        }
        mask = n - 1;
    }

    public int capacity() {
        return slots.length;
    }

    /**
     * Producer: the next free slot to fill, or null if the ring is full (the CQ is then overrun for good).
     * Follow a non-null claim with {@link #commit()}.
     */
    public WorkCompletion claim() {
        if (overrun) {
            return null;
        }
        if (producerIndex - consumerIndexCache >= slots.length) {
            consumerIndexCache = (long) CI.getAcquire(this);
            if (producerIndex - consumerIndexCache >= slots.length) {
                overrun = true;
                if (overrunListener != null) {
                    overrunListener.run(); // verbs raises IBV_EVENT_CQ_ERR when it happens, not when polled
                }
                return null;
            }
        }
        return slots[(int) producerIndex & mask];
    }

    /** Called once, on the producer's thread, at the moment the ring overruns. Set before use. */
    public void onOverrun(final Runnable listener) {
        this.overrunListener = listener;
    }

    /**
     * Producer: publish the slot filled after {@link #claim()}. An armed ring disarms and notifies on the next
     * completion, or, armed solicited-only, on the next solicited or unsuccessful one (ibv_req_notify_cq(3)).
     */
    public void commit() {
        final WorkCompletion wc = slots[(int) producerIndex & mask];
        producerIndex++;
        PI.setRelease(this, producerIndex);
        final int a = armed;
        if (a != DISARMED && (a == ARMED_NEXT || wc.solicited() || !wc.isSuccess())
                && ARMED.compareAndSet(this, a, DISARMED)) {
            eventListener.run();
        }
    }

    /** Called on the producer's thread each time an armed ring fires. Set before arming. */
    public void onEvent(final Runnable listener) {
        this.eventListener = listener;
    }

    /**
     * Arms the ring, once; {@code solicitedOnly} waits for a solicited or failed completion. Arming again before
     * it fired keeps it armed; a next-completion arm wins over a solicited-only one, as in the kernel's rxe.
     */
    public void arm(final boolean solicitedOnly) {
        if (eventListener == null) {
            throw new IllegalStateException("CQ ring armed with no event listener");
        }
        final int want = solicitedOnly ? ARMED_SOLICITED : ARMED_NEXT;
        int a;
        do {
            a = armed;
            if (a == ARMED_NEXT) {
                return;
            }
        } while (!ARMED.compareAndSet(this, a, want));
    }

    /** The ring's arming state: {@link #DISARMED}, {@link #ARMED_NEXT} or {@link #ARMED_SOLICITED}. */
    public int armed() {
        return armed;
    }

    /** Consumer: 1 and {@code wc} filled, 0 if empty, -1 if the CQ has overrun. */
    public int poll(final WorkCompletion wc) {
        if (overrun) {
            return -1;
        }
        final long available = (long) PI.getAcquire(this);
        if (consumerIndex == available) {
            return 0;
        }
        wc.copyFrom(slots[(int) consumerIndex & mask]);
        consumerIndex++;
        CI.setRelease(this, consumerIndex);
        return 1;
    }

    public boolean isOverrun() {
        return overrun;
    }

    /** Completions published and not yet polled (approximate when read off the consumer thread). */
    public int size() {
        return (int) ((long) PI.getAcquire(this) - (long) CI.getAcquire(this));
    }
}
