package io.jhca.tests.vfio.guest;

import java.util.Random;

import io.jhca.verbs.Access;
import io.jhca.verbs.WrOpcode;

/**
 * What the guest's mlx5 device and the host's rxe device send each other, derived from one seed so both sides know
 * every byte without sending it twice: for each RC opcode a 3000-byte payload (three 1 KiB packets), an immediate,
 * atomic operands; and where in each side's 64 KiB buffer things go. Every slot starts 2 KiB into a 4 KiB page, so
 * each transfer crosses a page boundary (the guest's pages are scattered over its RAM).
 */
public final class TrafficPlan {

    public static final int BUFFER = 1 << 16;
    public static final int LENGTH = 3000;
    public static final int ALL = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);
    /** Where the requester gathers a SEND or WRITE payload from. */
    public static final int SOURCE = 0x0800;
    /** Where a SEND, SEND_WITH_IMM lands on the responder (receive buffers). */
    public static final int RECV_SEND = 0x1800;
    public static final int RECV_SEND_IMM = 0x2800;
    /** Where RDMA_WRITE and RDMA_WRITE_WITH_IMM write on the responder. */
    public static final int WRITE = 0x3800;
    public static final int WRITE_IMM = 0x4800;
    /** The responder's bytes an RDMA_READ fetches, and where the requester puts them. */
    public static final int READ_SOURCE = 0x5800;
    public static final int READ_DEST = 0x6800;
    /** The responder's atomic targets (8-byte aligned) and the requester's result slots. */
    public static final int CAS_TARGET = 0x7ff8;
    public static final int FAA_TARGET = 0x8ff8;
    public static final int CAS_RESULT = 0x9000;
    public static final int FAA_RESULT = 0x9008;

    private final long seed;

    public TrafficPlan(long seed) {
        this.seed = seed;
    }

    public long seed() {
        return seed;
    }

    private Random random(String direction, WrOpcode op, int salt) {
        return new Random(seed * 1_000_003L + direction.hashCode() * 31L + op.ordinal() * 7L + salt);
    }

    /** The payload of {@code op} in {@code direction} ("guest" when the guest sends, "host" otherwise). */
    public byte[] payload(String direction, WrOpcode op) {
        byte[] b = new byte[LENGTH];
        random(direction, op, 1).nextBytes(b);
        return b;
    }

    public int imm(String direction, WrOpcode op) {
        return random(direction, op, 2).nextInt();
    }

    /** The atomic target's value before the operation. */
    public long atomicOld(String direction, WrOpcode op) {
        return random(direction, op, 3).nextLong();
    }

    /** FETCH_AND_ADD's addend, CMP_AND_SWP's swap value (its compare value is {@link #atomicOld}, so it swaps). */
    public long atomicOperand(String direction, WrOpcode op) {
        return random(direction, op, 4).nextLong();
    }

    /** The target's value after the operation. */
    public long atomicNew(String direction, WrOpcode op) {
        return op == WrOpcode.ATOMIC_CMP_AND_SWP ? atomicOperand(direction, op)
                : atomicOld(direction, op) + atomicOperand(direction, op);
    }
}
