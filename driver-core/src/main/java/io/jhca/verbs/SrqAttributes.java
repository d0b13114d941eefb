package io.jhca.verbs;

/**
 * The attributes of a shared receive queue ({@code struct ibv_srq_attr}): what {@link SharedReceiveQueue#query()}
 * reports and what {@link SharedReceiveQueue#modify} takes with a mask of {@link #MAX_WR} and {@link #LIMIT}.
 *
 * @param maxWr    the number of receive WRs the SRQ holds
 * @param maxSge   the SGEs one receive WR may carry
 * @param srqLimit the armed limit (0: not armed); the device disarms it when it reports the limit event
 */
public record SrqAttributes(int maxWr, int maxSge, int srqLimit) {

    /** {@code IBV_SRQ_MAX_WR}: resize the SRQ. */
    public static final int MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}: arm the limit. */
    public static final int LIMIT = 1 << 1;

    /** Attributes to arm the limit with ({@code modify(SrqAttributes.limit(l), SrqAttributes.LIMIT)}). */
    public static SrqAttributes limit(int srqLimit) {
        return new SrqAttributes(0, 0, srqLimit);
    }
}
