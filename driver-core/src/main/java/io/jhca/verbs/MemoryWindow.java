package io.jhca.verbs;

/**
 * A memory window ({@code struct ibv_mw}): an rkey that grants remote access to a span of a memory region, bound
 * and invalidated at run time without registering memory again (IBTA 10.6.7). Allocated with
 * {@link ProtectionDomain#allocMw}; a {@link MwType#TYPE_1} window is bound with {@link QueuePair#bindMw}, a
 * {@link MwType#TYPE_2} window by a {@link WrOpcode#BIND_MW} work request.
 *
 * <p>{@link #rkey()} is the key the window has now as far as the application knows it: after allocation, and
 * after each {@link QueuePair#bindMw} (the new key, set when the bind is posted, as libibverbs does). A type 2
 * window's key changes with the key byte its bind WR names; the application keeps that key itself.
 */
public abstract class MemoryWindow extends VerbsResource {
    private final ProtectionDomain pd;
    private final MwType type;
    private volatile int rkey;

    protected MemoryWindow(ProtectionDomain pd, MwType type, int rkey) {
        super("MW", pd);
        this.pd = pd;
        this.type = type;
        this.rkey = rkey;
    }

    public final ProtectionDomain pd() {
        return pd;
    }

    public final MwType type() {
        return type;
    }

    public final int rkey() {
        return rkey;
    }

    /** The key byte after {@code rkey}'s ({@code ibv_inc_rkey}): the index stays, the low 8 bits count up. */
    public static int incRkey(int rkey) {
        return (rkey & 0xFFFFFF00) | ((rkey + 1) & 0xFF);
    }

    /** Set when a type 1 bind is posted. */
    final void rkey(int key) {
        this.rkey = key;
    }

    @Override
    public String describe() {
        return "MW " + (type == MwType.TYPE_1 ? "type 1" : "type 2") + " rkey=0x" + Integer.toHexString(rkey);
    }
}
