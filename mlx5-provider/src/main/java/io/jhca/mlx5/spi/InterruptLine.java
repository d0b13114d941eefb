package io.jhca.mlx5.spi;

/**
 * The interrupt of the async EQ's vector (MSI-X vector 0, as rdma-core's mlx5_vfio wires it): the driver arms the EQ
 * and waits here instead of polling it on a timer. Only the driver's event thread waits.
 */
public interface InterruptLine {

    /**
     * Waits up to {@code timeoutMillis} for the interrupt.
     *
     * @return true when it fired (any number of times since the last call), false on timeout
     */
    boolean await(long timeoutMillis);

    /**
     * Ends the waiter's current or next {@link #await} at once, which then returns false as on a timeout: the driver's
     * stop, or work another thread left for the event thread. Any thread. A line that cannot be woken early keeps
     * this default, and its waiter sees such things at the end of its wait.
     */
    default void wakeUp() {
    }

    /** For logs: what the line is, e.g. "MSI-X vector 0 (eventfd 12)". */
    String describe();
}
