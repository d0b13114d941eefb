package io.jhca.verbs;

/**
 * What a shared receive queue is created with ({@code struct ibv_srq_init_attr}): its depth, the SGEs one receive
 * may carry and the limit to arm at once (0: none; rxe arms it at creation, as here).
 */
public final class SrqInitAttributes {
    private int maxWr = 16;
    private int maxSge = 1;
    private int srqLimit;

    public static SrqInitAttributes create() {
        return new SrqInitAttributes();
    }

    public SrqInitAttributes maxWr(int n) {
        this.maxWr = n;
        return this;
    }

    public SrqInitAttributes maxSge(int n) {
        this.maxSge = n;
        return this;
    }

    public SrqInitAttributes srqLimit(int n) {
        this.srqLimit = n;
        return this;
    }

    public int maxWr() {
        return maxWr;
    }

    public int maxSge() {
        return maxSge;
    }

    public int srqLimit() {
        return srqLimit;
    }
}
