package io.jhca.mlx5;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;

import io.jhca.mlx5.cmd.CmdQueueOptions;
import io.jhca.mlx5.cmd.DeviceHealth;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.init.AsyncEq;
import io.jhca.mlx5.init.Hca;
import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.verbs.AsyncEvent;

/**
 * What the async EQ reports, and a daemon thread that polls it, or, when the function has an interrupt line
 * ({@code Mlx5Function.eqInterrupt}), arms it and sleeps until the interrupt: CQ errors mark the CQ
 * (its next poll throws), QP errors move the QP to ERR and post the verbs event, port changes and internal errors
 * become verbs events, page requests are served with MANAGE_PAGES, command completions wake the command's waiter. An empty CQ also polls the EQ (one byte load), so
 * an overrun is seen at once; a page request met there is only noted and served by the thread, since it takes
 * commands. One EQ entry at a time is consumed, under the EQ's lock.
 *
 * <p>The thread also reads the health registers every {@value #HEALTH_POLL_MILLIS} ms, as mlx5_core's health poller
 * does: a function gone from the bus (BAR0 all ones), a firmware health syndrome or a health counter frozen for
 * {@code jhca.mlx5.healthStallMs} (6000), or a command that found the device so while it waited, declares the device
 * dead ({@link Mlx5Context#deviceDead}): no command reaches it any more, every QP is in ERR, the CQs flush the
 * outstanding WRs in software and one DEVICE_FATAL event names the reason, so an application that only polls CQs and
 * async events learns of a dead device instead of waiting forever.
 */
final class Mlx5Events implements AsyncEq.Handler, Runnable {

    /** How often the thread looks at the EQ when nothing happens. */
    static final long IDLE_NANOS = 1_000_000;
    /** How often the thread reads the health registers. */
    static final long HEALTH_POLL_MILLIS = 100;

    private final Mlx5Context ctx;
    private final Hca hca;
    /** Pending page request: function id in bits 63:32, pages in 31:0 (summed). */
    private final AtomicLong pendingPages = new AtomicLong();
    private final AtomicLong interrupts = new AtomicLong();
    private final AtomicLong commandInterrupts = new AtomicLong();
    private final AtomicLong completionInterrupts = new AtomicLong();
    /** Set by the event thread when an interrupt woke it, until the next poll; read in onEvent. */
    private boolean woken;
    private boolean wokenCmd;
    private boolean wokenComp;
    private final Thread thread;
    /** The function's interrupt line as the event thread waits on it; null when it polls. */
    private volatile InterruptLine line;
    private volatile boolean running = true;
    private DeviceHealth health;
    private long nextHealth;
    private boolean fatalReported;

    Mlx5Events(Mlx5Context ctx, Hca hca) {
        this.ctx = ctx;
        this.hca = hca;
        this.thread = new Thread(this, ctx.name() + "-events");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void stop() {
        running = false;
        LockSupport.unpark(thread);
        wakeLine();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * From the command path: consume the EQ only when half of it waits. Each command adds a CMD entry; a burst of
     * commands while the event thread is not scheduled must not overrun the EQ (fatal on a real device), but below
     * that the entries are the event thread's, so that they arrive the way the function delivers them (its interrupt,
     * or the event thread's polling).
     */
    void pollIfBacklogged() {
        if (hca.eq().backlogged()) {
            hca.eq().poll(this);
        }
    }

    /** Cheap check from the data path: poll only if an entry is waiting. */
    void pollIfPending() {
        if (hca.eq().pending()) {
            hca.eq().poll(this);
        }
    }

    private void wakeLine() {
        InterruptLine l = line;
        if (l != null) {
            l.wakeUp();
        }
    }

    @Override
    public void run() {
        InterruptLine line = ctx.function().eqInterrupt();
        this.line = line;   // before the loop's check of running: a stop after that check finds the line to wake
        boolean poll = true;
        while (running) {
            try {
                if (poll) {
                    hca.eq().poll(this);
                }
                if (woken && wokenCmd) {
                    commandInterrupts.incrementAndGet();
                }
                if (woken && wokenComp) {
                    completionInterrupts.incrementAndGet();
                }
                woken = false;
                wokenCmd = false;
                wokenComp = false;
                servePages();
                checkHealth(System.nanoTime());
            } catch (RuntimeException e) {
                ctx.event(new AsyncEvent(AsyncEvent.Type.DEVICE_FATAL, ctx.describe(), "event handling failed: " + e));
            }
            if (line == null) {
                LockSupport.parkNanos(IDLE_NANOS);
            } else {
                poll = awaitInterrupt(line);
            }
        }
    }

    /**
     * Arms the EQ and sleeps until its interrupt or the next health check; returns whether the EQ is to be read now.
     * As in mlx5_core, the EQ is read after its interrupt only: the arm doorbell carries the consumer index, and the
     * device raises the vector at once for entries past it ({@code eq_update_ci} then no second look), so an entry
     * that arrived since the last read, or whose interrupt lost the race with the wait's timeout, is read after the
     * interrupt the next arm gives it. Reading it at the timeout instead would leave that interrupt to wake the thread
     * to an empty EQ, and the entry would not count as having come by interrupt. A page request met by another thread
     * and this thread's stop end the wait ({@link InterruptLine#wakeUp}); on a line that cannot be woken early they
     * are seen at its end, at most {@value #HEALTH_POLL_MILLIS} ms later.
     */
    private boolean awaitInterrupt(InterruptLine line) {
        if (!hca.eq().arm()) {
            return true;    // another thread is reading the EQ: look again once it is done
        }
        if (pendingPages.get() != 0) {
            return false;
        }
        if (line.await(HEALTH_POLL_MILLIS)) {
            interrupts.incrementAndGet();
            woken = true;
            return true;
        }
        return false;
    }

    /** Interrupts that woke the thread (0 when the function has no interrupt line). */
    long interrupts() {
        return interrupts.get();
    }

    /** Interrupt wake-ups whose EQ poll found command completion entries. */
    long commandInterrupts() {
        return commandInterrupts.get();
    }

    /** Interrupt wake-ups whose EQ poll found completion (COMP) entries: CQ events that came by interrupt. */
    long completionInterrupts() {
        return completionInterrupts.get();
    }

    private void checkHealth(long now) {
        if (fatalReported || now - nextHealth < 0) {
            return;
        }
        nextHealth = now + TimeUnit.MILLISECONDS.toNanos(HEALTH_POLL_MILLIS);
        if (health == null) {
            health = new DeviceHealth(hca.initSegment(),
                    Long.getLong("jhca.mlx5.healthStallMs", CmdQueueOptions.DEFAULT_HEALTH_STALL_MILLIS), now);
            return;
        }
        String why = hca.cmdq().deadReason();   // a waiting command may have found it first
        if (why == null) {
            why = health.check(now);
        }
        if (why != null) {
            fatalReported = true;
            ctx.deviceDead(why);
        }
    }

    private void servePages() {
        long p = pendingPages.getAndSet(0);
        int pages = (int) p;
        if (pages != 0) {
            hca.servePageRequest((int) (p >>> 32), pages);
        }
    }

    @Override
    public void onEvent(DirectBuffer eqes, int e) {
        int type = Eqe.type(eqes, e);
        switch (type) {
            case EventType.COMP: {
                if (Thread.currentThread() == thread) {
                    wokenComp = true; // counted after the poll if an interrupt woke this thread
                }
                Mlx5Cq cq = ctx.cqs().get(Eqe.compCqn(eqes, e));
                if (cq != null) {
                    cq.completionEvent();
                }
                break;
            }
            case EventType.CQ_ERROR: {
                Mlx5Cq cq = ctx.cqs().get(Eqe.cqErrorCqn(eqes, e));
                if (cq != null) {
                    cq.markError(Eqe.cqErrorSyndrome(eqes, e));
                }
                break;
            }
            case EventType.WQ_CATAS_ERROR:
            case EventType.WQ_INVAL_REQ_ERROR:
            case EventType.WQ_ACCESS_ERROR:
            case EventType.PATH_MIG_FAILED:
            case EventType.PATH_MIG:
            case EventType.COMM_EST:
            case EventType.SQ_DRAINED:
            case EventType.SRQ_LAST_WQE: {
                Mlx5Qp qp = ctx.qps().get(Eqe.qpSrqNumber(eqes, e));
                if (qp != null) {
                    qp.asyncError(type);
                }
                break;
            }
            case EventType.SRQ_RQ_LIMIT: {
                Mlx5Srq srq = ctx.srqs().get(Eqe.qpSrqNumber(eqes, e));
                if (srq != null) {
                    srq.limitReached();
                }
                break;
            }
            case EventType.PORT_CHANGE: {
                int sub = Eqe.subType(eqes, e);
                ctx.event(AsyncEvent.ofPort(sub == EventType.PORT_CHANGE_ACTIVE ? AsyncEvent.Type.PORT_ACTIVE
                        : AsyncEvent.Type.PORT_ERR, Math.max(1, Eqe.portNumber(eqes, e)), "port change, sub_type " + sub));
                break;
            }
            case EventType.INTERNAL_ERROR:
                ctx.event(new AsyncEvent(AsyncEvent.Type.DEVICE_FATAL, ctx.describe(), "device internal error"));
                break;
            case EventType.CMD:
                if (Thread.currentThread() == thread) {
                    wokenCmd = true; // counted after the poll if an interrupt woke this thread
                }
                hca.commands().queue().completionEvent(Eqe.cmdVector(eqes, e));
                break;
            case EventType.PAGE_REQUEST: {
                long fn = Eqe.pageRequestFunctionId(eqes, e);
                int n = Eqe.pageRequestNumPages(eqes, e);
                pendingPages.accumulateAndGet((fn << 32) | (n & 0xffffffffL),
                        (a, b) -> (b & 0xffffffff00000000L) | (((int) a + (int) b) & 0xffffffffL));
                LockSupport.unpark(thread);
                wakeLine();
                break;
            }
            default:
                break;
        }
    }
}
