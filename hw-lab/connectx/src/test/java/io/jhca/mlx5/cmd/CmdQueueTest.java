package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.connectx.CmdQueueDevice;
import io.jhca.connectx.DirectCmdMemory;

/** Command queue round trips against a fake firmware thread using {@link CmdQueueDevice}. */
class CmdQueueTest {

    private static final long IOVA_BASE = 0x4000_0000L;

    private final List<AutoCloseable> closeLater = new ArrayList<>();
    private DirectCmdMemory mem;
    private FakeFirmware fw;

    private CmdQueue open(DirectCmdMemory memory, int logSize, CmdQueueOptions options) {
        mem = memory;
        fw = new FakeFirmware(memory, logSize, 6);
        CmdQueue q = CmdQueue.open(new InitSegment(fw), memory, options);
        closeLater.add(fw);
        return q;
    }

    private CmdQueue open() {
        return open(DirectCmdMemory.withIovaBase(IOVA_BASE), 5, CmdQueueOptions.defaults().timeoutMillis(10_000));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : closeLater) {
            c.close();
        }
    }

    private static UnsafeBuffer buffer(int n) {
        return new UnsafeBuffer(new byte[n]);
    }

    /** The driver's view of an entry, read through the device's DMA window. */
    private CmdQueueEntry entry(CmdQueue q, int slot) {
        UnsafeBuffer view = new UnsafeBuffer();
        assertTrue(mem.wrap(view, q.queueIova() + ((long) slot << q.logStride()), CmdQueueEntry.SIZE));
        return new CmdQueueEntry().wrap(view, 0);
    }

    private static Struct createCq(UnsafeBuffer in, int npas) {
        Struct s = new Struct().wrap(CqLayouts.CREATE_CQ_IN, in, 0, CqLayouts.CREATE_CQ_IN.sizeBytes(npas)).clear()
                .set("opcode", CmdOpcode.CREATE_CQ)
                .set("cq_context.log_cq_size", 8)
                .set("cq_context.uar_page", 3)
                .set("cq_context.dbr_addr", 0x7f00_1000L);
        for (int i = 0; i < npas; i++) {
            s.setElement("pas", i, 0x9000_0000L + 4096L * i);
        }
        return s;
    }

    private static Struct createQp(UnsafeBuffer in, int npas) {
        Struct s = new Struct().wrap(QpLayouts.CREATE_QP_IN, in, 0, QpLayouts.CREATE_QP_IN.sizeBytes(npas)).clear()
                .set("opcode", CmdOpcode.CREATE_QP)
                .set("qpc.st", QpLayouts.ST_RC)
                .set("qpc.pm_state", QpLayouts.PM_STATE_MIGRATED)
                .set("qpc.pd", 0x12)
                .set("qpc.uar_page", 3)
                .set("qpc.log_sq_size", 8)
                .set("qpc.log_rq_size", 8)
                .set("qpc.log_rq_stride", 2)
                .set("qpc.cqn_snd", 0x80)
                .set("qpc.cqn_rcv", 0x81)
                .set("qpc.dbr_addr", 0x7f00_2000L)
                .setBytes("qpc.primary_address_path.rgid_rip", new byte[] {
                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1});
        for (int i = 0; i < npas; i++) {
            s.setElement("pas", i, 0xa000_0000L + 4096L * i);
        }
        return s;
    }

    private static byte[] bytes(UnsafeBuffer b, int length) {
        byte[] a = new byte[length];
        b.getBytes(0, a);
        return a;
    }

    @Test
    void inlineOnlyCommandNeedsNoMailbox() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        UnsafeBuffer out = buffer(HcaLayouts.ENABLE_HCA_OUT.sizeBytes());
        new Struct().wrap(HcaLayouts.ENABLE_HCA_IN, in, 0).clear().set("opcode", CmdOpcode.ENABLE_HCA);
        q.execute(in, 16, out, out.capacity());

        assertEquals(0, CmdHeader.status(out, 0));
        FakeFirmware.Seen seen = fw.seen.get(0);
        assertEquals(CmdOpcode.ENABLE_HCA, seen.opcode());
        assertEquals(0, seen.slot());
        assertEquals(16, seen.inLength());
        assertEquals(12, seen.outLength());
        assertEquals(1, mem.allocations(), "only the queue page, no mailbox");
        assertEquals(List.of(1), fw.doorbellValues, "doorbell = 1 << slot");
        CmdQueueEntry e = entry(q, 0);
        assertEquals(0L, e.inPointer());
        assertEquals(0L, e.outPointer());
        assertEquals(CmdQueueEntry.TYPE_PCIE, e.type());
        assertEquals(1, e.token(), "first token");
        assertEquals(0, e.statusOwn(), "handed back: owner bit clear, delivery OK");
        assertEquals(q.queueIova(), new InitSegment(fw).cmdqAddress());
    }

    @Test
    void tokensAdvancePerCommand() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        UnsafeBuffer out = buffer(16);
        new Struct().wrap(UarPdLayouts.ALLOC_PD_IN, in, 0).clear().set("opcode", CmdOpcode.ALLOC_PD);
        for (int i = 1; i <= 3; i++) {
            q.execute(in, 16, out, 16);
            assertEquals(i, entry(q, 0).token());
            assertEquals(0x10 + i - 1, UarPdLayouts.ALLOC_PD_OUT.get(out, 0, "pd"));
        }
    }

    @Test
    void oneOutputMailbox() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        UnsafeBuffer out = buffer(HcaLayouts.QUERY_ISSI_OUT.sizeBytes());
        new Struct().wrap(HcaLayouts.QUERY_ISSI_IN, in, 0).clear().set("opcode", CmdOpcode.QUERY_ISSI);
        q.execute(in, 16, out, out.capacity());
        assertEquals(0x3, HcaLayouts.QUERY_ISSI_OUT.get(out, 0, "supported_issi_dw0"), "field at byte 0x6c");
        assertEquals(2, mem.allocations(), "queue page + one output mailbox");
        assertEquals(IOVA_BASE + 0x1000, entry(q, 0).outPointer(), "mailbox IOVA from the allocator, 1 KiB aligned");
    }

    @Test
    void oneInputMailbox() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(CqLayouts.CREATE_CQ_IN.sizeBytes(2));
        Struct s = createCq(in, 2);
        UnsafeBuffer out = buffer(16);
        q.execute(s, new Struct().wrap(CqLayouts.CREATE_CQ_OUT, out, 0));
        assertEquals(0x80, CqLayouts.CREATE_CQ_OUT.get(out, 0, "cqn"));
        FakeFirmware.Seen seen = fw.seen.get(0);
        assertEquals(0x110 + 16, seen.inLength());
        assertArrayEquals(bytes(in, s.length()), seen.input(), "firmware gathered exactly the input");
    }

    @Test
    void chainedInputMailboxesForManyPas() {
        CmdQueue q = open();
        int npas = 300;
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(npas));
        Struct s = createQp(in, npas);
        assertEquals(6, Mailbox.blocksFor(s.length()), "2672 bytes: 16 inline + 6 blocks");
        UnsafeBuffer out = buffer(16);
        q.execute(s, new Struct().wrap(QpLayouts.CREATE_QP_OUT, out, 0));
        assertEquals(0x100, QpLayouts.CREATE_QP_OUT.get(out, 0, "qpn"));
        FakeFirmware.Seen seen = fw.seen.get(0);
        assertArrayEquals(bytes(in, s.length()), seen.input());
        UnsafeBuffer got = new UnsafeBuffer(seen.input());
        assertEquals(0xa000_0000L + 4096L * 299, QpLayouts.CREATE_QP_IN.flexibleArray().getElement(got, 0, 299));
        assertEquals(0x81, QpLayouts.CREATE_QP_IN.get(got, 0, "qpc.cqn_rcv"));

        // a second, shorter command reuses the chain: only the blocks it needs are linked
        UnsafeBuffer small = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(1));
        int before = mem.allocations();
        q.execute(createQp(small, 1), new Struct().wrap(QpLayouts.CREATE_QP_OUT, out, 0));
        assertEquals(before, mem.allocations(), "no new mailboxes");
        assertArrayEquals(bytes(small, small.capacity()), fw.seen.get(1).input());
    }

    @Test
    void manyPagesGoThroughThePageSlot() {
        CmdQueue q = open();
        int n = 1000;
        UnsafeBuffer in = buffer(HcaLayouts.MANAGE_PAGES_IN.sizeBytes(n));
        Struct s = new Struct().wrap(HcaLayouts.MANAGE_PAGES_IN, in, 0, in.capacity()).clear()
                .set("opcode", CmdOpcode.MANAGE_PAGES)
                .set("op_mod", HcaLayouts.PAGES_GIVE)
                .set("input_num_entries", n);
        List<Long> pages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long page = 0x1_0000_0000L + 4096L * i;
            pages.add(page);
            s.setElement("pas", i, page);
        }
        assertEquals(16, Mailbox.blocksFor(s.length()));
        q.execute(s, new Struct().wrap(HcaLayouts.MANAGE_PAGES_OUT, buffer(16), 0));
        assertEquals(pages, fw.pagesGiven);
        assertEquals(31, q.pageSlot());
        assertEquals(31, fw.seen.get(0).slot(), "MANAGE_PAGES uses the reserved last slot");
        assertEquals(List.of(1 << 31), fw.doorbellValues);
    }

    @Test
    void chainedOutputMailboxesForHcaCaps() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(HcaLayouts.QUERY_HCA_CAP_IN, in, 0).clear()
                .set("opcode", CmdOpcode.QUERY_HCA_CAP)
                .set("op_mod", HcaCap.opMod(HcaCap.TYPE_GENERAL, HcaCap.MODE_CURRENT));
        UnsafeBuffer out = buffer(HcaLayouts.QUERY_HCA_CAP_OUT.sizeBytes());
        q.execute(in, 16, out, out.capacity());
        Layout l = HcaLayouts.QUERY_HCA_CAP_OUT;
        assertEquals(18, l.get(out, 0, "capability.cmd_hca_cap.log_max_qp"));
        assertEquals(15, l.get(out, 0, "capability.cmd_hca_cap.log_max_qp_sz"));
        assertEquals(24, l.get(out, 0, "capability.cmd_hca_cap.log_max_cq"));
        assertEquals(22, l.get(out, 0, "capability.cmd_hca_cap.log_max_cq_sz"));
        assertEquals(9, l.get(out, 0, "capability.cmd_hca_cap.log_bf_reg_size"));
        assertEquals(4, l.get(out, 0, "capability.cmd_hca_cap.log_max_ra_req_qp"));
        assertEquals(1, l.get(out, 0, "capability.cmd_hca_cap.roce"));
        assertEquals(0x5a, out.getByte(4111), "last byte of the 8th output mailbox");
        assertEquals(1, fw.seen.get(0).opMod());
        assertEquals(1 + 8, mem.allocations());
    }

    @Test
    void identityIovasWorkToo() {
        CmdQueue q = open(DirectCmdMemory.identity(), 3, CmdQueueOptions.defaults().timeoutMillis(10_000));
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(100));
        Struct s = createQp(in, 100);
        q.execute(s, new Struct().wrap(QpLayouts.CREATE_QP_OUT, buffer(16), 0));
        assertArrayEquals(bytes(in, s.length()), fw.seen.get(0).input());
        assertEquals(7, q.pageSlot());
    }

    @Test
    void badStatusBecomesCommandException() {
        CmdQueue q = open();
        fw.fail(CmdOpcode.CREATE_QP, CmdStatus.BAD_PARAM_ERR.value(), 0x1a2b3c4d);
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(1));
        UnsafeBuffer out = buffer(16);
        CommandException e = assertThrows(CommandException.class,
                () -> q.execute(createQp(in, 1), new Struct().wrap(QpLayouts.CREATE_QP_OUT, out, 0)));
        assertEquals("CREATE_QP(0x500) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1a2b3c4d)"
                + " [BAD_PARAM_ERR]", e.getMessage());
        assertEquals("CREATE_QP", e.commandName());
        assertEquals(CmdStatus.BAD_PARAM_ERR, e.cmdStatus());
        assertEquals(0x1a2b3c4d, e.syndrome());
        assertFalse(e.isDeliveryError());
        assertEquals(3, CmdHeader.status(out, 0), "output is still copied back");
        assertEquals(0, entry(q, 0).statusOwn() & 1);
    }

    @Test
    void unknownOpcodeReportsBadOperation() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        CmdHeader.start(in, 0, 16, 0x999, 7);
        CommandException e = assertThrows(CommandException.class, () -> q.execute(in, 16, buffer(16), 16));
        assertEquals("unknown command opcode(0x999) op_mod(0x7) failed, status bad operation(0x2),"
                + " syndrome (0xbad0bad) [BAD_OP_ERR]", e.getMessage());
    }

    @Test
    void tooShortOutputIsTheFirmwaresCall() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(HcaLayouts.QUERY_ISSI_IN, in, 0).clear().set("opcode", CmdOpcode.QUERY_ISSI);
        CommandException e = assertThrows(CommandException.class, () -> q.execute(in, 16, buffer(16), 16));
        assertEquals(CmdStatus.BAD_OUTP_LEN_ERR, e.cmdStatus());
    }

    /** Runs CREATE_QP (several input mailboxes) with a descriptor corruption applied just before the device reads. */
    private CommandException corrupted(java.util.function.BiConsumer<CmdQueueEntry, Mailbox> corruption) {
        CmdQueue q = open();
        fw.beforeFetch(mask -> {
            CmdQueueEntry e = entry(q, 0);
            UnsafeBuffer block = new UnsafeBuffer();
            long ptr = e.inPointer();
            Mailbox m = new Mailbox();
            if (ptr != 0 && mem.wrap(block, ptr, Mailbox.SIZE)) {
                m.wrap(block, 0);
            }
            corruption.accept(e, m);
        });
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(300));
        CommandException e = assertThrows(CommandException.class,
                () -> q.execute(createQp(in, 300), new Struct().wrap(QpLayouts.CREATE_QP_OUT, buffer(16), 0)));
        assertTrue(e.isDeliveryError());
        assertTrue(fw.seen.isEmpty(), "a command that was not delivered is not executed");
        return e;
    }

    @Test
    void wrongMailboxTokenIsATokenError() {
        CommandException e = corrupted((entry, first) -> first.token(entry.token() ^ 0xff));
        assertEquals(DeliveryStatus.TOK_ERR.value(), e.deliveryStatus());
        assertEquals("CREATE_QP(0x500) op_mod(0x0) not delivered, delivery status token error(0x2) [TOK_ERR]",
                e.getMessage());
    }

    @Test
    void wrongBlockNumberIsReported() {
        CommandException e = corrupted((entry, first) -> {
            UnsafeBuffer second = new UnsafeBuffer();
            assertTrue(mem.wrap(second, first.next(), Mailbox.SIZE));
            new Mailbox().wrap(second, 0).blockNumber(7);
        });
        assertEquals(DeliveryStatus.BAD_BLK_NUM_ERR.value(), e.deliveryStatus());
        assertTrue(e.getMessage().contains("bad block number(0x3)"), e.getMessage());
    }

    @Test
    void misalignedMailboxPointerIsReported() {
        CommandException e = corrupted((entry, first) -> entry.inPointer(entry.inPointer() + 0x40));
        assertEquals(DeliveryStatus.IN_PTR_ALIGN_ERR.value(), e.deliveryStatus());
    }

    @Test
    void truncatedChainIsAnInputLengthError() {
        CommandException e = corrupted((entry, first) -> first.next(0));
        assertEquals(DeliveryStatus.IN_LENGTH_ERR.value(), e.deliveryStatus());
    }

    @Test
    void unmappedMailboxIsAFirmwareError() {
        CommandException e = corrupted((entry, first) -> entry.inPointer(0x7700_0000L));
        assertEquals(DeliveryStatus.FW_ERR.value(), e.deliveryStatus());
    }

    @Test
    void wrongDescriptorTypeIsReported() {
        CommandException e = corrupted((entry, first) -> entry.type(3));
        assertEquals(DeliveryStatus.CMD_DESCR_ERR.value(), e.deliveryStatus());
        assertTrue(e.getMessage().endsWith("bad command descriptor type(0x10) [CMD_DESCR_ERR]"), e.getMessage());
    }

    @Test
    void crashingModelReportsFirmwareError() {
        CmdQueue q = open();
        fw.crashOn(CmdOpcode.ALLOC_PD);
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(UarPdLayouts.ALLOC_PD_IN, in, 0).clear().set("opcode", CmdOpcode.ALLOC_PD);
        CommandException e = assertThrows(CommandException.class, () -> q.execute(in, 16, buffer(16), 16));
        assertEquals(DeliveryStatus.FW_ERR.value(), e.deliveryStatus());
        assertTrue(fw.device().lastHandlerFailure().getMessage().contains("ALLOC_PD"));
    }

    @Test
    void executeWaitsForTheOwnershipBit() {
        CmdQueue q = open();
        fw.delay(300);
        UnsafeBuffer in = buffer(16);
        UnsafeBuffer out = buffer(16);
        new Struct().wrap(UarPdLayouts.ALLOC_PD_IN, in, 0).clear().set("opcode", CmdOpcode.ALLOC_PD);
        long t0 = System.nanoTime();
        q.execute(in, 16, out, 16);
        assertTrue(System.nanoTime() - t0 >= 300_000_000L, "returned before the device answered");
        assertEquals(0x10, UarPdLayouts.ALLOC_PD_OUT.get(out, 0, "pd"));
    }

    @Test
    void spuriousDoorbellIsIgnoredByTheDevice() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(UarPdLayouts.ALLOC_PD_IN, in, 0).clear().set("opcode", CmdOpcode.ALLOC_PD);
        q.execute(in, 16, buffer(16), 16);
        CmdQueueDevice other = new CmdQueueDevice(mem);
        other.attach(q.queueIova(), 5, 6);
        assertNull(other.fetch(0), "entry owned by the driver");
        assertEquals(0, other.onDoorbell(0xffffffff, c -> fail("must not execute")));
    }

    @Test
    void noAnswerTimesOutAndLeaksTheSlot() {
        CmdQueue q = open(DirectCmdMemory.withIovaBase(IOVA_BASE), 2, CmdQueueOptions.defaults().timeoutMillis(200));
        fw.silent(true);
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(HcaLayouts.ENABLE_HCA_IN, in, 0).clear().set("opcode", CmdOpcode.ENABLE_HCA);
        long t0 = System.nanoTime();
        CommandTimeoutException e = assertThrows(CommandTimeoutException.class,
                () -> q.execute(in, 16, buffer(12), 12));
        long waited = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(waited >= 200 && waited < 5_000, "waited " + waited + " ms");
        assertEquals("ENABLE_HCA(0x104) op_mod(0x0) timeout after 200 ms on slot 0. Will cause a leak of a command"
                + " resource", e.getMessage());
        assertEquals(0, e.slot());
        assertEquals(1, entry(q, 0).statusOwn() & 1, "still owned by the device");

        fw.silent(false);
        q.execute(in, 16, buffer(12), 12);
        assertEquals(1, fw.seen.get(0).slot(), "the timed-out slot is not reused");
        int allocations = mem.allocations();
        q.close();
        assertEquals(allocations, mem.allocations(), "memory of a queue with a stuck slot is not freed");
    }

    @Test
    void checksumsBothWays() {
        CmdQueue q = open(DirectCmdMemory.withIovaBase(IOVA_BASE), 5,
                CmdQueueOptions.defaults().timeoutMillis(10_000).checksums(true));
        fw.device().checksums(true);
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(300));
        UnsafeBuffer out = buffer(16);
        q.execute(createQp(in, 300), new Struct().wrap(QpLayouts.CREATE_QP_OUT, out, 0));
        assertEquals(0x100, QpLayouts.CREATE_QP_OUT.get(out, 0, "qpn"));
        assertTrue(entry(q, 0).signatureValid(), "device re-signed the entry with the final status byte");
        // QUERY_HCA_CAP: eight output mailboxes signed by the device, verified by the driver
        UnsafeBuffer capIn = buffer(16);
        CmdHeader.start(capIn, 0, 16, CmdOpcode.QUERY_HCA_CAP, 1);
        q.execute(capIn, 16, buffer(4112), 4112);
    }

    @Test
    void deviceChecksumsCatchAnUnsignedMailbox() {
        CmdQueue q = open();
        fw.device().checksums(true);
        // inline-only commands pass: the entry signature is always written (mlx5_core set_signature)
        UnsafeBuffer in = buffer(16);
        new Struct().wrap(UarPdLayouts.ALLOC_PD_IN, in, 0).clear().set("opcode", CmdOpcode.ALLOC_PD);
        q.execute(in, 16, buffer(16), 16);
        UnsafeBuffer cq = buffer(CqLayouts.CREATE_CQ_IN.sizeBytes(1));
        CommandException e = assertThrows(CommandException.class,
                () -> q.execute(createCq(cq, 1), new Struct().wrap(CqLayouts.CREATE_CQ_OUT, buffer(16), 0)));
        assertEquals(DeliveryStatus.SIGNAT_ERR.value(), e.deliveryStatus());
    }

    @Test
    void driverChecksumsCatchAnUnsignedAnswer() {
        CmdQueue q = open(DirectCmdMemory.withIovaBase(IOVA_BASE), 5,
                CmdQueueOptions.defaults().timeoutMillis(10_000).checksums(true));
        UnsafeBuffer in = buffer(16);
        CmdHeader.start(in, 0, 16, CmdOpcode.QUERY_ISSI, 0);
        CommandException e = assertThrows(CommandException.class, () -> q.execute(in, 16, buffer(112), 112));
        assertEquals(DeliveryStatus.SIGNAT_ERR.value(), e.deliveryStatus());
    }

    @Test
    void concurrentCallersUseSeveralSlots() throws Exception {
        CmdQueue q = open();
        // hold the first command until a second one has been rung: two slots are then in flight for sure
        java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
        fw.beforeFetch(mask -> {
            if (first.getAndSet(false)) {
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (fw.pendingDoorbells() == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
            }
        });
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<Long>>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                futures.add(pool.submit(() -> {
                    List<Long> pds = new ArrayList<>();
                    UnsafeBuffer in = buffer(16);
                    UnsafeBuffer out = buffer(16);
                    CmdHeader.start(in, 0, 16, CmdOpcode.ALLOC_PD, 0);
                    for (int i = 0; i < 25; i++) {
                        q.execute(in, 16, out, 16);
                        pds.add(UarPdLayouts.ALLOC_PD_OUT.get(out, 0, "pd"));
                    }
                    return pds;
                }));
            }
            Set<Long> all = new HashSet<>();
            for (Future<List<Long>> f : futures) {
                all.addAll(f.get());
            }
            assertEquals(100, all.size(), "every caller got its own answer");
            Set<Integer> slots = new HashSet<>();
            fw.seen.forEach(s -> slots.add(s.slot()));
            assertTrue(slots.size() > 1, "slots used: " + slots);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void singleEntryQueueSharesItsSlot() {
        CmdQueue q = open(DirectCmdMemory.withIovaBase(IOVA_BASE), 0, CmdQueueOptions.defaults());
        assertEquals(-1, q.pageSlot());
        UnsafeBuffer in = buffer(HcaLayouts.MANAGE_PAGES_IN.sizeBytes(1));
        new Struct().wrap(HcaLayouts.MANAGE_PAGES_IN, in, 0, in.capacity()).clear()
                .set("opcode", CmdOpcode.MANAGE_PAGES).set("op_mod", 1).set("input_num_entries", 1)
                .setElement("pas", 0, 0x5000);
        q.execute(in, in.capacity(), buffer(16), 16);
        assertEquals(0, fw.seen.get(0).slot());
    }

    @Test
    void refusesBadArgumentsAndFirmware() {
        CmdQueue q = open();
        assertThrows(IllegalArgumentException.class, () -> q.execute(buffer(16), 4, buffer(16), 16));
        assertThrows(IndexOutOfBoundsException.class, () -> q.execute(buffer(16), 32, buffer(16), 16));
        assertThrows(IndexOutOfBoundsException.class, () -> q.execute(buffer(16), 16, buffer(16), 64));

        FakeFirmware old = new FakeFirmware(mem, 5, 6);
        closeLater.add(old);
        old.putIntBe(InitSegment.CMDIF_REV_FW_SUB, 4 << 16);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> CmdQueue.open(new InitSegment(old), mem));
        assertEquals("Driver cmdif rev(5) differs from firmware's(4)", e.getMessage());
    }

    @Test
    void closeReturnsTheMemory() {
        CmdQueue q = open();
        UnsafeBuffer in = buffer(QpLayouts.CREATE_QP_IN.sizeBytes(300));
        q.execute(createQp(in, 300), new Struct().wrap(QpLayouts.CREATE_QP_OUT, buffer(16), 0));
        assertTrue(mem.allocations() > 1);
        q.close();
        assertEquals(0, mem.allocations());
        assertThrows(IllegalStateException.class, () -> q.execute(in, 16, buffer(16), 16));
    }
}
