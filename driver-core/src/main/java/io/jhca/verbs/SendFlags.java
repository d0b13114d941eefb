package io.jhca.verbs;

/** Send flags, with the bits of {@code enum ibv_send_flags}. */
public final class SendFlags {
    /** Wait for earlier RDMA READs and atomics to complete before starting this WR. */
    public static final int FENCE = 1;
    /** Generate a completion for this WR (without it, only errors complete, unless sq_sig_all). */
    public static final int SIGNALED = 1 << 1;
    /** Set the solicited-event bit on the last packet. */
    public static final int SOLICITED = 1 << 2;
    /** Copy the gathered bytes into the WQE at post time; the buffers may be reused at once. */
    public static final int INLINE = 1 << 3;

    public static final int ALL = FENCE | SIGNALED | SOLICITED | INLINE;

    private SendFlags() {
    }
}
