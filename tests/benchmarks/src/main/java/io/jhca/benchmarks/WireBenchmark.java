package io.jhca.benchmarks;

import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.Ipv4IdMode;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketValidator;
import io.jhca.rxe.wire.Reth;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The rxe provider's per-packet CPU costs: header encode, header decode + validation, and the ICRC
 * (the dominant cost: a CRC-32 over every byte). Run with {@code -prof gc} to see 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class WireBenchmark {
    private static final int SRC = 0x7F000001;
    private static final int DST = 0x7F000002;

    /** RoCE payload bytes per packet: a small message and the two common path MTUs. */
    @Param({"64", "1024", "4096"})
    public int payload;

    private final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final Icrc icrc = new Icrc();
    private final PacketValidator validator = new PacketValidator();
    private UnsafeBuffer packet;
    private int roceLength;

    @Setup
    public void setUp() {
        roceLength = Bth.LENGTH + Reth.LENGTH + payload;
        packet = new UnsafeBuffer(ByteBuffer.allocateDirect(roceLength + Icrc.LENGTH));
        encodeHeaders();
        for (int i = 0; i < payload; i++) {
            packet.putByte(Bth.LENGTH + Reth.LENGTH + i, (byte) i);
        }
        Icrc.put(packet, roceLength, icrc.computeIpv4(SRC, DST, 0, 0x4000, 0xC000, 4791, packet, 0, roceLength));
    }

    private void encodeHeaders() {
        bth.wrap(packet, 0).opcode(Opcode.RC_RDMA_WRITE_ONLY).pkey(Bth.DEFAULT_PKEY).destQp(0x11).ackReq(true).psn(0x123456);
        reth.wrap(packet, Bth.LENGTH).va(0x7f0000001000L).rkey(0x1234).dmaLength(payload);
    }

    /** BTH + RETH of an RDMA WRITE ONLY written into a packet buffer. */
    @Benchmark
    public int encodeBthReth() {
        encodeHeaders();
        return packet.getInt(0);
    }

    /** The ICRC of one packet, as a sender computes it. */
    @Benchmark
    public int icrcCompute() {
        return icrc.computeIpv4(SRC, DST, 0, 0x4000, 0xC000, 4791, packet, 0, roceLength);
    }

    /** What a receiver does first: header sanity, then the ICRC check (strict: sender's IPv4 ID is 0). */
    @Benchmark
    public int validateAndVerify() {
        return validator.validateIpv4(Ipv4IdMode.STRICT_ID_ZERO, SRC, DST, 0xC000, 4791, packet, 0, roceLength + Icrc.LENGTH);
    }

    /** The same with the sender's IPv4 ID unknown (Linux rxe peers): the ID is solved from the ICRC. */
    @Benchmark
    public int validateRecoverId() {
        return validator.validateIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 0xC000, 4791, packet, 0, roceLength + Icrc.LENGTH);
    }
}
