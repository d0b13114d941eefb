package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.ipv4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;

import org.agrona.BufferUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The same bytes give the same ICRC in heap, direct-ByteBuffer and raw-address buffers, without allocating. */
class IcrcBufferKindsTest {

    private static final int SRC = ipv4(172, 16, 0, 1);
    private static final int DST = ipv4(172, 16, 0, 2);

    /** Heap with a wrap offset, direct ByteBuffer with a wrap offset, raw address; each at its own offset. */
    private static List<MutableDirectBuffer> kinds(final byte[] roce, final ByteBuffer direct) {
        final byte[] heap = new byte[roce.length + 16];
        final UnsafeBuffer a = new UnsafeBuffer(heap, 7, roce.length + 9);
        a.putBytes(3, roce);
        final UnsafeBuffer d = new UnsafeBuffer(direct, 5, roce.length + 11);
        d.putBytes(3, roce);
        final UnsafeBuffer r = new UnsafeBuffer(BufferUtil.address(direct) + roce.length + 32, roce.length + 3);
        r.putBytes(3, roce);
        return List.of(a, d, r);
    }

    @Test
    void sameIcrcFromEveryKindOfBuffer() {
        final Icrc icrc = new Icrc();
        final Random rnd = new Random(13);
        for (final int length : new int[] {12, 16, 100, 2048 + 12, 5000, 9000}) {
            final byte[] roce = new byte[length];
            rnd.nextBytes(roce);
            final UnsafeBuffer reference = new UnsafeBuffer(roce);
            final int expected = icrc.computeIpv4(SRC, DST, 0x77, 0x4000, 1000, 4791, reference, 0, length);
            final ByteBuffer direct = ByteBuffer.allocateDirect(2 * length + 64);
            for (final MutableDirectBuffer b : kinds(roce, direct)) {
                assertEquals(expected, icrc.computeIpv4(SRC, DST, 0x77, 0x4000, 1000, 4791, b, 3, length),
                        b.getClass().getSimpleName() + " " + length);
            }
            // Alternating between two direct ByteBuffers must not reuse a stale view.
            final ByteBuffer other = ByteBuffer.allocateDirect(length + 8);
            final UnsafeBuffer o = new UnsafeBuffer(other, 8, length);
            o.putBytes(0, roce);
            assertEquals(expected, icrc.computeIpv4(SRC, DST, 0x77, 0x4000, 1000, 4791, o, 0, length));
            assertEquals(expected, icrc.computeIpv4(SRC, DST, 0x77, 0x4000, 1000, 4791, kinds(roce, direct).get(1), 3,
                    length));
        }
    }

    private static final int ROUNDS = 10_000;

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    void encodeVerifyAndValidateDoNotAllocate() {
        final Icrc icrc = new Icrc();
        final PacketValidator validator = new PacketValidator();
        final RocePacket packet = new RocePacket();
        final Bth bth = new Bth();
        final Reth reth = new Reth();
        final byte[] roce = new byte[1024 + 28];
        new Random(14).nextBytes(roce);
        final ByteBuffer direct = ByteBuffer.allocateDirect(4 * roce.length + 64);
        final MutableDirectBuffer[] buffers = kinds(roce, direct).toArray(new MutableDirectBuffer[0]); // no iterator
        final UnsafeBuffer frame = new UnsafeBuffer(ByteBuffer.allocateDirect(2048));
        final int[] sink = new int[1];
        final Runnable work = () -> {
            for (final MutableDirectBuffer b : buffers) {
                bth.wrap(b, 3).set(Opcode.RC_RDMA_WRITE_FIRST, false, 0, 0xFFFF, 0x11, false, 5);
                reth.wrap(b, 3 + Bth.LENGTH).set(0x1000, 0x42, 4096);
                final int length = roce.length - Icrc.LENGTH;
                Icrc.put(b, 3 + length, icrc.computeIpv4(SRC, DST, 0x1234, 0x4000, 1000, 4791, b, 3, length));
                sink[0] += icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 1000, 4791, b, 3, roce.length);
                sink[0] += validator.validateIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 1000, 4791, b, 3, roce.length);
                sink[0] += icrc.verifyIpv6(1, 2, 3, 4, 1000, 4791, b, 3, roce.length) ? 1 : 0;
                sink[0] += bth.psn() + reth.rkey();
            }
            packet.ipv4(SRC, DST).identification(7);
            bth.wrap(frame, packet.roceOffset()).set(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, 0x11, false, 1);
            final int length = packet.encode(frame, 0, Bth.LENGTH + Aeth.LENGTH, icrc);
            sink[0] += packet.parse(frame, 0, length) && icrc.verifyIpPacket(frame, 0, length) ? 1 : 0;
        };
        for (int i = 0; i < 20_000; i++) {
            work.run();
        }
        allocatedBytes();
        final long before = allocatedBytes();
        for (int i = 0; i < ROUNDS; i++) {
            work.run();
        }
        final long allocated = allocatedBytes() - before;
        // Any allocation per round would be >= 16 bytes x ROUNDS; a few hundred one-off bytes (JIT transitions,
        // the MXBean itself) are not the code under test.
        assertTrue(allocated < ROUNDS, allocated + " bytes allocated by " + ROUNDS + " rounds");
        assertTrue(sink[0] != 0);
    }
}
