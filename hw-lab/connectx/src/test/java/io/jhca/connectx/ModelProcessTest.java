package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.init.HcaCommands;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import io.jhca.testkit.ThreadPerTask;

/**
 * The model out of process, no VM needed: this JVM starts {@link ModelProcess} on a BAR0 file and a RAM file in
 * /dev/shm, drives it as a guest's driver would through {@link ShmFunction} (BAR0 = the same file mapped, DMA memory
 * carved from the RAM file, IOVA = file offset below the low limit and 4 GiB + offset above it), brings it up with the
 * mlx5 provider and runs RC traffic of every opcode, in both directions, with content checks, against an rxe device
 * in this JVM. The driver's buffers sit above 4 GiB in guest-physical space, so both parts of the layout carry DMA.
 */
class ModelProcessTest {

    private static final String MODEL_IP = "127.0.0.5";
    private static final String PEER_IP = "127.0.0.6";
    private static final long RAM_BYTES = 64L << 20;
    /** A low part smaller than the file, so that RAM above 4 GiB exists too. */
    private static final long LOW_BYTES = 48L << 20;
    private static final int BUF = 1 << 16;
    /**
     * The driver maps RAM here; the model maps it wherever its kernel puts it, so the driver's virtual addresses
     * (what the rxe peer names in RETH.VA) mean nothing there and the model must resolve them through its memory
     * keys, as it must for a guest.
     */
    private static final long RAM_ADDRESS = 0x3f00_0000_0000L;
    private static final int ALL = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);

    private static Path bar;
    private static Path ramFile;
    private static Process process;
    private static GuestRam ram;
    private static Mlx5Context mlx5;
    private static RxeContext rxe;
    private static final List<AutoCloseable> closeLater = new ArrayList<>();

    @BeforeAll
    static void startModelProcess() throws Exception {
        Path shm = Path.of("/dev/shm");
        bar = Files.createTempFile(shm, "jhca-cx-bar-", "");
        ramFile = Files.createTempFile(shm, "jhca-cx-ram-", "");
        try (RandomAccessFile f = new RandomAccessFile(bar.toFile(), "rw")) {
            f.setLength(32L << 20); // an ivshmem memdev's size; the model serves the first BAR0_BYTES
        }
        try (RandomAccessFile f = new RandomAccessFile(ramFile.toFile(), "rw")) {
            f.setLength(RAM_BYTES);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-opens") || a.startsWith("-Dagrona")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ModelProcess.class.getName(),
                "--name", "mlx5_shm0", "--bar", bar.toString(), "--ram", ramFile.toString(),
                "--address", MODEL_IP, "--low-ram", Long.toString(LOW_BYTES)));
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String ready = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return "read failed: " + e;
            }
        }, ThreadPerTask.EXECUTOR).get(30, TimeUnit.SECONDS);
        assertTrue(ready != null && ready.startsWith("ready mlx5_shm0 "), "the model process said: " + ready);

        ram = GuestRam.map(ramFile, LOW_BYTES, RAM_ADDRESS);
        ShmFunction fn = new ShmFunction("mlx5_shm0", bar, ram, InetAddress.getByName(MODEL_IP));
        mlx5 = Mlx5Provider.open(new DeviceInfo("mlx5_shm0", "mlx5", 0, "InfiniBand"), fn,
                Mlx5Options.defaults().withInitTimeouts(20_000, 20_000).withCommandTimeout(20_000));
        rxe = RxeProvider.open(RxeDeviceConfig.builder("rxe_shm_peer").address(PEER_IP).build());
    }

    @AfterAll
    static void stop() throws Exception {
        for (int i = closeLater.size() - 1; i >= 0; i--) {
            closeLater.get(i).close();
        }
        if (mlx5 != null) {
            mlx5.close();
        }
        if (rxe != null) {
            rxe.close();
        }
        if (ram != null) {
            ram.close();
        }
        if (process != null) {
            process.getOutputStream().close(); // end of stdin: the model stops
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                fail("the model process did not stop when its stdin closed");
            }
            assertEquals(0, process.exitValue(), "model process exit status");
        }
        Files.deleteIfExists(bar);
        Files.deleteIfExists(ramFile);
    }

    private static <T extends AutoCloseable> T own(T c) {
        closeLater.add(c);
        return c;
    }

    @Test
    void bar0IsTheSharedFileAndTheHealthCounterAdvances() throws Exception {
        UnsafeBuffer fromFile = new UnsafeBuffer(new byte[16]);
        try (RandomAccessFile f = new RandomAccessFile(bar.toFile(), "r")) {
            byte[] b = new byte[16];
            f.readFully(b);
            fromFile.wrap(b);
        }
        assertEquals(35 << 16 | 16, fromFile.getInt(InitSegment.FW_REV, ByteOrder.BIG_ENDIAN), "fw_rev in the file");
        assertEquals("16.35.2000", mlx5.queryDevice().fwVer());
        InitSegment iseg = new InitSegment(mlx5.function().bar0());
        int first = iseg.healthCounter();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (iseg.healthCounter() == first) {
            if (System.nanoTime() > deadline) {
                fail("health counter stuck at " + first + " for 10 s");
            }
            Thread.sleep(5);
        }
        assertNotEquals(0xffffffff, iseg.healthFwVer());
    }

    @Test
    void pagesOutsideTheRamFileAreRefusedAsUnmapped() {
        HcaCommands cmds = mlx5.hca().commands();
        // the first page past the low part (the hole below 4 GiB), and the first past the end of the high part
        for (long iova : new long[] {LOW_BYTES, GuestRam.HIGH_BASE + (RAM_BYTES - LOW_BYTES)}) {
            CommandException e = assertThrows(CommandException.class,
                    () -> cmds.givePages(HcaCommands.SELF, new long[] {iova}, 1));
            assertEquals(CmdStatus.BAD_PARAM_ERR, e.cmdStatus(), String.format("IOVA 0x%x", iova));
            assertEquals(CmdSyndromes.PAGE_NOT_MAPPED, e.syndrome());
        }
    }

    @Test
    void memoryOutsideTheRamFileCannotBeRegistered() {
        ProtectionDomain pd = own(mlx5.allocatePd());
        try (DmaRegion anon = DmaMemory.allocate(4096)) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> pd.register(anon, 0, 4096, ALL));
            assertTrue(String.valueOf(e.getMessage()).contains("not in the RAM file")
                    || (e.getCause() != null && String.valueOf(e.getCause().getMessage()).contains("not in the RAM file")),
                    "error names the problem: " + e);
        }
    }

    /** One end of the connection: QP, CQ, a registered buffer. */
    private record End(Context ctx, QueuePair qp, CompletionQueue cq, MemoryRegion mr, UnsafeBuffer buf, Gid gid,
                       int gidIndex, int psn) {
    }

    private static End end(Context ctx, DmaRegion mem, int psn) {
        ProtectionDomain pd = own(ctx.allocatePd());
        MemoryRegion mr = own(pd.register(mem, 0, mem.length(), ALL));
        CompletionQueue cq = own(ctx.createCq(64));
        QueuePair qp = own(pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(16).maxInlineData(64)));
        int gidIndex = roceIndex(ctx);
        return new End(ctx, qp, cq, mr, mem.buffer(), ctx.queryGid(1, gidIndex), gidIndex, psn);
    }

    private static int roceIndex(Context ctx) {
        for (int i = 0; i < ctx.queryPort(1).gidTblLen(); i++) {
            if (ctx.queryGid(1, i).isIpv4Mapped()) {
                return i;
            }
        }
        throw new AssertionError(ctx.name() + " has no IPv4 GID");
    }

    private static void connect(End a, End b) {
        a.qp.modify(QpAttributes.toInit(1).accessFlags(ALL));
        b.qp.modify(QpAttributes.toInit(1).accessFlags(ALL));
        a.qp.modify(QpAttributes.toRtr(b.qp.qpn(), b.psn, AhAttributes.to(b.gid).sgidIndex(a.gidIndex).hopLimit(64),
                Mtu.MTU_1024).maxDestRdAtomic(4));
        b.qp.modify(QpAttributes.toRtr(a.qp.qpn(), a.psn, AhAttributes.to(a.gid).sgidIndex(b.gidIndex).hopLimit(64),
                Mtu.MTU_1024).maxDestRdAtomic(4));
        a.qp.modify(QpAttributes.toRts(a.psn).maxRdAtomic(4));
        b.qp.modify(QpAttributes.toRts(b.psn).maxRdAtomic(4));
    }

    private static WorkCompletion await(CompletionQueue cq, Context ctx) {
        WorkCompletion wc = new WorkCompletion();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (cq.poll(wc) == 0) {
            ctx.progress();
            if (System.nanoTime() > deadline) {
                fail("no completion on " + cq.describe() + " within 20 s");
            }
            Thread.onSpinWait();
        }
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        return wc;
    }

    @Test
    void rcTrafficOfEveryOpcodeBothWaysAgainstRxe() {
        long seed = System.nanoTime();
        System.out.println("ModelProcessTest seed " + seed);
        Random random = new Random(seed);
        DmaRegion mlxMem = own(ram.allocate(BUF, true));
        assertTrue(mlxMem.iova(0) >= GuestRam.HIGH_BASE, "buffer above 4 GiB in guest-physical space");
        DmaRegion rxeMem = own(DmaMemory.allocate(BUF));
        End m = end(mlx5, mlxMem, random.nextInt() & 0xffffff);
        End r = end(rxe, rxeMem, random.nextInt() & 0xffffff);
        connect(m, r);
        traffic(m, r, random, seed);
        traffic(r, m, random, seed);
    }

    /** Every RC opcode from {@code s} to {@code t}, each checked byte for byte on the other side. */
    private static void traffic(End s, End t, Random random, long seed) {
        String dir = s.ctx.name() + " -> " + t.ctx.name() + " (seed " + seed + ")";
        int len = 3000; // three 1 KiB packets: first, middle, last
        for (WrOpcode op : WrOpcode.values()) {
            if (op.isLocal() || op == WrOpcode.SEND_WITH_INV) {
                continue; // memory window operations: MemoryWindowTest runs them on every device pair
            }
            byte[] payload = new byte[len];
            random.nextBytes(payload);
            s.buf.putBytes(0, payload);
            t.buf.setMemory(0, BUF, (byte) 0);
            int imm = random.nextInt();
            SendWr wr = new SendWr().wrId(op.ordinal()).sendFlags(SendFlags.SIGNALED).opcode(op);
            switch (op) {
                case SEND:
                case SEND_WITH_IMM: {
                    assertEquals(1, t.qp.postRecv(new RecvWr().wrId(100 + op.ordinal()).sge(t.mr, 4096, len)));
                    wr.sge(s.mr, 0, len);
                    if (op == WrOpcode.SEND_WITH_IMM) {
                        wr.immData(imm);
                    }
                    assertEquals(1, s.qp.postSend(wr));
                    WorkCompletion rwc = await(t.cq, t.ctx);
                    WorkCompletion swc = await(s.cq, s.ctx);
                    assertEquals(WcOpcode.SEND, swc.opcode(), dir);
                    assertEquals(WcOpcode.RECV, rwc.opcode(), dir);
                    assertEquals(len, rwc.byteLen(), dir);
                    if (op == WrOpcode.SEND_WITH_IMM) {
                        assertEquals(imm, rwc.immData(), dir);
                    }
                    assertArrayEquals(payload, bytes(t.buf, 4096, len), op + " " + dir);
                    break;
                }
                case RDMA_WRITE:
                case RDMA_WRITE_WITH_IMM: {
                    if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        assertEquals(1, t.qp.postRecv(new RecvWr().wrId(200)));
                        wr.immData(imm);
                    }
                    wr.sge(s.mr, 0, len).rdma(t.mr.address() + 8192, t.mr.rkey());
                    assertEquals(1, s.qp.postSend(wr));
                    await(s.cq, s.ctx);
                    if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        WorkCompletion rwc = await(t.cq, t.ctx);
                        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, rwc.opcode(), dir);
                        assertEquals(imm, rwc.immData(), dir);
                    } else {
                        // an unsignaled-on-the-target WRITE: wait for the bytes themselves
                        awaitBytes(t, 8192, payload);
                    }
                    assertArrayEquals(payload, bytes(t.buf, 8192, len), op + " " + dir);
                    break;
                }
                case RDMA_READ: {
                    t.buf.putBytes(12288, payload);
                    s.buf.setMemory(0, len, (byte) 0);
                    wr.sge(s.mr, 0, len).rdma(t.mr.address() + 12288, t.mr.rkey());
                    assertEquals(1, s.qp.postSend(wr));
                    WorkCompletion swc = await(s.cq, s.ctx);
                    assertEquals(WcOpcode.RDMA_READ, swc.opcode(), dir);
                    assertArrayEquals(payload, bytes(s.buf, 0, len), op + " " + dir);
                    break;
                }
                case ATOMIC_CMP_AND_SWP:
                case ATOMIC_FETCH_AND_ADD: {
                    long old = random.nextLong();
                    long operand = random.nextLong();
                    t.buf.putLong(16384, old);
                    boolean cas = op == WrOpcode.ATOMIC_CMP_AND_SWP;
                    wr.sge(s.mr, 64, 8).atomic(t.mr.address() + 16384, t.mr.rkey(), cas ? old : operand, operand);
                    assertEquals(1, s.qp.postSend(wr));
                    WorkCompletion swc = await(s.cq, s.ctx);
                    assertEquals(cas ? WcOpcode.COMP_SWAP : WcOpcode.FETCH_ADD, swc.opcode(), dir);
                    assertEquals(old, s.buf.getLong(64), op + " returns the old value, " + dir);
                    assertEquals(cas ? operand : old + operand, t.buf.getLong(16384), op + " result, " + dir);
                    break;
                }
                default:
                    fail("opcode " + op + " not covered");
            }
        }
    }

    private static void awaitBytes(End t, int offset, byte[] expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!java.util.Arrays.equals(expected, bytes(t.buf, offset, expected.length))) {
            t.ctx.progress();
            if (System.nanoTime() > deadline) {
                fail("RDMA WRITE data did not arrive within 20 s");
            }
            Thread.onSpinWait();
        }
    }

    private static byte[] bytes(UnsafeBuffer b, int offset, int len) {
        byte[] out = new byte[len];
        b.getBytes(offset, out);
        return out;
    }
}
