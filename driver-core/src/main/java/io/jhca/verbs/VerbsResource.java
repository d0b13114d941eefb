package io.jhca.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lifetime rules shared by every verbs object, as libibverbs has them: a resource is used by its children
 * (a PD by its MRs, QPs and AHs; a CQ by the QPs that complete into it; a context by its PDs and CQs), and
 * closing a resource that still has users is refused with EBUSY, naming them. Nothing is freed behind the
 * user's back. Closing twice is harmless; using a closed resource throws.
 */
public abstract class VerbsResource implements AutoCloseable {
    private final String kind;
    private VerbsResource[] uses;
    private final Set<VerbsResource> users = new LinkedHashSet<>();
    private volatile boolean closed;
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(VerbsResource.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    /**
     * Async events of this element taken from the channel and not acknowledged (QP, CQ, SRQ). Atomic, not under
     * this object's lock: the channel counts under its own lock, and a close that posts an event must not wait.
     */
    private final AtomicInteger asyncUnacked = new AtomicInteger();
    /** The channel that queued an event of this element, so closing drops the ones not taken. */
    private volatile AsyncEventChannel asyncChannel;

    /**
     * @param kind what this is, for messages: "PD", "MR", "CQ", "QP", "AH", "context"
     * @param uses the resources this one depends on; each refuses to close while this one is open
     */
    protected VerbsResource(String kind, VerbsResource... uses) {
        this.kind = kind;
        this.uses = uses.clone();
        for (VerbsResource r : this.uses) {
            r.checkOpen();
        }
        // one of them may close between its check and its turn here (another thread): then the ones already taken
        // let go again, or they would count a resource that never came to be as a user and refuse to close for ever
        int taken = 0;
        try {
            for (VerbsResource r : this.uses) {
                r.addUser(this);
                taken++;
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < taken; i++) {
                this.uses[i].removeUser(this);
            }
            throw e;
        }
    }

    /** "QP 0x000011", "CQ 3", ...: how messages name this resource. */
    public String describe() {
        return kind;
    }

    public final String kind() {
        return kind;
    }

    public final boolean isClosed() {
        return closed;
    }

    /**
     * {@link #isClosed()} as a plain read, for a check a posting loop repeats per WR: this thread's own close is always
     * seen, another thread's perhaps only at the batch's end, which checks again with {@link #isClosed()}. A volatile
     * read is an acquire barrier for the JIT: after it every field the loop uses is loaded again, and the loop's
     * invariants cannot leave it. What a racing close may reach is memory, and a closed region's views refuse access
     * or read harmless pages (the memory module), so the plain read costs an error's promptness, never a crash.
     */
    final boolean isClosedPlain() {
        return (boolean) CLOSED.get(this);
    }

    /**
     * Whether {@code e}, thrown by a provider while this resource was being used, comes from another thread's close:
     * never for a {@link VerbsException} (the provider's own refusal), otherwise whether this resource is closed once a
     * close in progress has ended (close holds this object's lock while it destroys, and the flag is set only once it
     * did). For the posting paths' errors: a write into a ring whose memory a racing close already released is refused
     * by the memory's bounds check, and the caller should hear "closed", not the half-way state.
     */
    final boolean closedUnder(RuntimeException e) {
        if (e instanceof VerbsException) {
            return false;
        }
        synchronized (this) {
            return closed;
        }
    }

    /** Throws if this resource was closed; cheap enough for the data path (one volatile read). */
    protected final void checkOpen() {
        if (closed) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " is closed");
        }
    }

    private synchronized void addUser(VerbsResource user) {
        if (closed) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " is closed");
        }
        users.add(user);
    }

    private synchronized void removeUser(VerbsResource user) {
        users.remove(user);
    }

    /** Number of open resources that use this one. */
    public synchronized int userCount() {
        return users.size();
    }

    @Override
    public final void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!users.isEmpty()) {
                Map<String, Integer> byKind = new LinkedHashMap<>();
                for (VerbsResource u : users) {
                    byKind.merge(u.kind, 1, Integer::sum);
                }
                StringBuilder sb = new StringBuilder();
                byKind.forEach((k, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(n).append(' ').append(k)
                        .append(n > 1 ? "s" : ""));
                throw new VerbsException(VerbsException.EBUSY,
                        "cannot close " + describe() + ": still in use by " + sb + "; close them first");
            }
            int unacked = asyncUnacked.get();
            if (unacked != 0) {
                // ibv_destroy_qp/cq/srq wait until every async event of theirs was acknowledged; waiting could hang
                throw new VerbsException(VerbsException.EBUSY, "cannot close " + describe() + ": " + unacked
                        + " async events not acknowledged (AsyncEventChannel.ackEvent)");
            }
            beforeDestroy();
            destroy();
            closed = true;
        }
        for (VerbsResource r : uses) {
            r.removeUser(this);
        }
        afterClose();
        AsyncEventChannel ch = asyncChannel;
        if (ch != null) {
            ch.forget(this);
        }
    }

    /** Async events of this element taken from its context's channel and not yet acknowledged. */
    public final int unackedAsyncEvents() {
        return asyncUnacked.get();
    }

    final void asyncEventTaken() {
        asyncUnacked.incrementAndGet();
    }

    final void asyncEventAcked() {
        asyncUnacked.decrementAndGet();
    }

    final void noteAsyncChannel(AsyncEventChannel ch) {
        asyncChannel = ch;
    }

    /**
     * Records that this resource also uses {@code r}, decided after construction (a CQ and its completion
     * channel): {@code r} refuses to close while this one is open.
     */
    final synchronized void alsoUses(VerbsResource r) {
        r.addUser(this);
        VerbsResource[] u = java.util.Arrays.copyOf(uses, uses.length + 1);
        u[uses.length] = r;
        uses = u;
    }

    /** Last check before {@link #destroy()}, under the resource's lock: throw to refuse the close. */
    void beforeDestroy() {
    }

    /** Runs once after the resource closed and left its uses. */
    void afterClose() {
    }

    /** Releases the provider's side of the resource; called once, with no users left. */
    protected abstract void destroy();
}
