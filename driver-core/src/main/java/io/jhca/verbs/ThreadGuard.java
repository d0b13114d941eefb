package io.jhca.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The threading rule of one queue (a QP's send or receive side, a CQ), as rdma-core has it: shared by default,
 * serialized by a lock that costs one uncontended CAS and a release store ({@link Lock}); or single-threaded when the
 * application asks (rdma-core's {@code ibv_alloc_td}, {@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED}), with no lock and
 * a check that the calling thread is the owner, which is bound at the first use. A second thread is refused with an
 * {@link IllegalStateException} naming the object and both threads, before it touches the ring.
 */
final class ThreadGuard {

    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(ThreadGuard.class, "owner", Thread.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String what;
    /** Shared mode: the lock; null when single-threaded. */
    private final Lock lock;
    /** Single-threaded mode: the thread bound at first use (CAS from null, plain reads after). */
    private Thread owner;

    private ThreadGuard(final String what, final boolean singleThreaded) {
        this.what = what;
        this.lock = singleThreaded ? null : new Lock();
    }

    /** @param what the queue, for messages ("send queue", "receive queue", "CQ") */
    static ThreadGuard of(final String what, final boolean singleThreaded) {
        return new ThreadGuard(what, singleThreaded);
    }

    boolean singleThreaded() {
        return lock == null;
    }

    /** Begins a use by the calling thread: takes the lock, or checks (binds) the owner. */
    void enter(final VerbsResource resource) {
        if (lock != null) {
            lock.lock();
        } else {
            checkOwner(resource);
        }
    }

    /** Ends a use begun with {@link #enter}. */
    void exit() {
        if (lock != null) {
            lock.unlock();
        }
    }

    /** Shared mode: true if the calling thread holds the lock; single-threaded: the owner check. */
    boolean heldByCaller(final VerbsResource resource) {
        if (lock != null) {
            return lock.isHeldByCurrentThread();
        }
        checkOwner(resource);
        return true;
    }

    /** Shared mode: true if the calling thread holds the lock more than once (a post inside its own batch). */
    boolean lockHeldTwice() {
        return lock != null && lock.getHoldCount() > 1;
    }

    /** Shared mode: the thread holding the lock now, or null. */
    Thread holder() {
        return lock != null ? lock.holder() : owner;
    }

    /**
     * For a provider's own work on the queue from a control path (cleaning a CQ when a QP resets): takes the lock
     * when shared; single-threaded objects are the application's to serialize, so nothing is checked.
     */
    void enterControl() {
        if (lock != null) {
            lock.lock();
        }
    }

    private void checkOwner(final VerbsResource resource) {
        final Thread t = Thread.currentThread();
        Thread o = owner;
        if (o == t) {
            return;
        }
        if (o == null) {
            o = (Thread) OWNER.compareAndExchange(this, null, t);   // the witness: null if this thread won
            if (o == null || o == t) {
                return;
            }
        }
        throw new IllegalStateException(resource.describe() + " was created single-threaded and its " + what
                + " belongs to thread \"" + o.getName() + "\"; thread \"" + t.getName() + "\" may not use it"
                + " (create it without the single-threaded option to share it between threads)");
    }

    IllegalStateException heldByAnother(final VerbsResource resource, final String call) {
        final Thread h = holder();
        return new IllegalStateException(resource.describe() + ": " + call + " on the " + what + " from thread \""
                + Thread.currentThread().getName() + "\" while thread \"" + (h == null ? "?" : h.getName())
                + "\" has a batch open on it");
    }

    /**
     * The lock of a shared queue: reentrant, and as cheap as rdma-core's {@code mlx5_spinlock} with need_lock when
     * uncontended: one CAS to take it, a release store to free it. A {@code ReentrantLock} paid a CAS and a volatile
     * store (a full fence on x86) per use, and a monitor two CASes. Nothing wakes a waiter: it spins, then yields, then
     * parks for bounded, growing times (a builder batch holds the lock across the application's own code), so the
     * release needs no fence to find out whether someone waits.
     */
    static final class Lock {
        private static final VarHandle HOLDER;

        static {
            try {
                HOLDER = MethodHandles.lookup().findVarHandle(Lock.class, "holder", Thread.class);
            } catch (final ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Spins before a waiter yields, yields before it parks; parks from 10 µs doubling to at most 100 µs. */
        private static final int SPINS = 128;
        private static final int YIELDS = 128;
        private static final long PARK_MIN_NANOS = 10_000;
        private static final long PARK_MAX_NANOS = 100_000;

        private volatile Thread holder;
        /** How many times the holder has taken it; read and written by the holder only. */
        private int holds;

        void lock() {
            final Thread t = Thread.currentThread();
            if (HOLDER.compareAndSet(this, null, t)) {
                holds = 1;
            } else if (holder == t) {
                holds++;
            } else {
                lockContended(t);
            }
        }

        private void lockContended(final Thread t) {
            boolean interrupted = false;
            long park = PARK_MIN_NANOS;
            for (int tries = 0; ; tries++) {
                if (holder == null && HOLDER.compareAndSet(this, null, t)) {
                    holds = 1;
                    if (interrupted) {
                        t.interrupt();   // as ReentrantLock.lock(): the wait ignores interrupts and keeps them
                    }
                    return;
                }
                if (tries < SPINS) {
                    Thread.onSpinWait();
                } else if (tries < SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(this, park);
                    park = Math.min(park * 2, PARK_MAX_NANOS);
                    interrupted |= Thread.interrupted();   // else an interrupted thread's park returns at once
                }
            }
        }

        void unlock() {
            if (holder != Thread.currentThread()) {
                throw new IllegalMonitorStateException("not held by " + Thread.currentThread().getName());
            }
            if (--holds == 0) {
                HOLDER.setRelease(this, null);
            }
        }

        boolean isHeldByCurrentThread() {
            return holder == Thread.currentThread();
        }

        /** The holder's count; 0 for any other thread. */
        int getHoldCount() {
            return isHeldByCurrentThread() ? holds : 0;
        }

        Thread holder() {
            return holder;
        }
    }
}
