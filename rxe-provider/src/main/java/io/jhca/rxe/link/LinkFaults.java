package io.jhca.rxe.link;

/**
 * What a {@link FaultyLink} does to the packets of one direction: each field is a probability per packet
 * (0 = never, 1 = always), checked in the order drop, corrupt, delay, reorder, duplicate. Immutable.
 *
 * @param drop       the packet is lost
 * @param duplicate  the packet is delivered twice
 * @param reorder    the packet is held back and delivered after the next one (or after {@code delayNanos})
 * @param delay      the packet is held back for {@code delayNanos}
 * @param corrupt    one random bit of the UDP payload is flipped (the ICRC check must catch it)
 * @param delayNanos how long delayed packets are held; also the longest a reordered packet waits
 */
public record LinkFaults(double drop, double duplicate, double reorder, double delay, double corrupt, long delayNanos) {

    /** A link that does nothing to the packets. */
    public static final LinkFaults NONE = new LinkFaults(0, 0, 0, 0, 0, 1_000_000L);

    public LinkFaults {
        check("drop", drop);
        check("duplicate", duplicate);
        check("reorder", reorder);
        check("delay", delay);
        check("corrupt", corrupt);
        if (delayNanos < 0) {
            throw new IllegalArgumentException("delayNanos must not be negative: " + delayNanos);
        }
    }

    private static void check(final String name, final double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(name + " probability must be in [0, 1]: " + p);
        }
    }

    public boolean isNone() {
        return drop == 0 && duplicate == 0 && reorder == 0 && delay == 0 && corrupt == 0;
    }

    /** Same faults with a drop probability. */
    public LinkFaults withDrop(final double p) {
        return new LinkFaults(p, duplicate, reorder, delay, corrupt, delayNanos);
    }

    public LinkFaults withDuplicate(final double p) {
        return new LinkFaults(drop, p, reorder, delay, corrupt, delayNanos);
    }

    public LinkFaults withReorder(final double p) {
        return new LinkFaults(drop, duplicate, p, delay, corrupt, delayNanos);
    }

    public LinkFaults withDelay(final double p, final long nanos) {
        return new LinkFaults(drop, duplicate, reorder, p, corrupt, nanos);
    }

    public LinkFaults withCorrupt(final double p) {
        return new LinkFaults(drop, duplicate, reorder, delay, p, delayNanos);
    }
}
