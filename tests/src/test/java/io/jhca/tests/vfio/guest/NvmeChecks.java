package io.jhca.tests.vfio.guest;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.pci.PciSysfs;
import io.jhca.vfio.BarMapping;
import io.jhca.vfio.DmaMapping;
import io.jhca.vfio.IrqInfo;
import io.jhca.vfio.VfioContainer;
import io.jhca.vfio.VfioDevice;
import io.jhca.vfio.VfioInterrupt;

/**
 * The vfio layer against QEMU's nvme (a device with MSI-X): controller registers, MSI-X through VFIO, and one admin
 * command (Identify Controller) whose completion arrives on MSI-X vector 0 and whose data the controller wrote by
 * DMA. Register layout and queue formats: NVM Express Base Specification 1.4, sections 3.1 (registers), 4.2/4.6
 * (submission/completion queue entries), 5.15.2.2 (Identify Controller data), 7.6.1 (initialization).
 */
final class NvmeChecks {

    static final int VENDOR = 0x1b36; // Red Hat, QEMU's PCI vendor for its own devices
    static final int DEVICE = 0x0010;
    /** The serial number scripts/vfio-vm gives the controller (-device nvme,serial=...). */
    static final String SERIAL = "jhca0001";

    private static final int CAP = 0x00;
    private static final int VS = 0x08;
    private static final int CC = 0x14;
    private static final int CSTS = 0x1C;
    private static final int AQA = 0x24;
    private static final int ASQ = 0x28;
    private static final int ACQ = 0x30;
    private static final int DOORBELLS = 0x1000;
    /** CC: EN, I/O submission/completion entry sizes 2^6 and 2^4 (CSS 0 NVM, MPS 0 = 4 KiB pages). */
    private static final int CC_ENABLE = 1 | 6 << 16 | 4 << 20;
    private static final int CSTS_RDY = 1;
    private static final int ENTRIES = 16;
    private static final int SQE = 64;
    private static final int CQE = 16;
    private static final int OPC_IDENTIFY = 0x06;
    private static final int CNS_CONTROLLER = 1;
    private static final int CID = 0x2a;
    /** VFIO_PCI_MSIX_IRQ_INDEX (linux/vfio.h). */
    private static final int MSIX = 2;
    private static final int PAGE = 4096;
    private static final long IOVA = 0x200000; // SQ, CQ, identify data: three pages
    private static final long TIMEOUT_MS = 5000;

    private final Checks checks;
    private final VfioContainer container;

    NvmeChecks(final Checks checks, final VfioContainer container) {
        this.checks = checks;
        this.container = container;
    }

    void run(final PciSysfs sysfs) throws Exception {
        var functions = sysfs.find(VENDOR, DEVICE);
        if (functions.size() != 1) {
            checks.skipped("nvme.open", "expected one 1b36:0010 function, found " + functions);
            return;
        }
        try (VfioDevice nvme = container.openDevice(functions.get(0));
             BarMapping bar = nvme.mapBar(0);
             DmaRegion ram = DmaMemory.allocate(DmaOptions.of(3 * PAGE))) {
            long[] cap = new long[1];
            checks.run("nvme.registers", e -> {
                cap[0] = bar.read64(CAP);
                e.isTrue("CAP.CSS bit 37: NVM command set", (cap[0] >>> 37 & 1) == 1);
                e.isTrue("CAP.MQES: at least " + ENTRIES + " entries", (cap[0] & 0xFFFF) + 1 >= ENTRIES);
                e.isTrue("CAP.MPSMIN: 4 KiB pages", (cap[0] >>> 48 & 0xF) == 0);
                int vs = bar.read32(VS);
                e.isTrue("VS 1.x (0x" + Integer.toHexString(vs) + ")", vs >>> 16 == 1);
                return String.format("CAP 0x%016x VS %d.%d.%d", cap[0], vs >>> 16, vs >>> 8 & 0xFF, vs & 0xFF);
            });
            IrqInfo[] msix = new IrqInfo[1];
            checks.run("nvme.msix-info", e -> {
                msix[0] = nvme.irqInfo(MSIX);
                e.isTrue("MSI-X vectors signal eventfds", msix[0].eventfd());
                e.isTrue("at least one MSI-X vector", msix[0].count() >= 1);
                return msix[0].count() + " MSI-X vectors, flags 0x" + Integer.toHexString(msix[0].flags());
            });
            nvme.enableBusMaster();
            DmaMapping map = container.mapDma(ram.address(), IOVA, 3 * PAGE);
            try (VfioInterrupt vector0 = nvme.enableInterrupt(MSIX, 0)) {
                checks.run("nvme.identify-msix", e -> identify(e, bar, cap[0], ram, vector0));
            } finally {
                bar.write32(CC, 0);
                container.unmapDma(map);
            }
        }
    }

    private static String identify(final Checks.Expect e, final BarMapping bar, final long cap, final DmaRegion ram,
                                   final VfioInterrupt vector0) throws InterruptedException {
        UnsafeBuffer sq = ram.buffer(0, PAGE);
        UnsafeBuffer cq = ram.buffer(PAGE, PAGE);
        UnsafeBuffer data = ram.buffer(2 * PAGE, PAGE);
        sq.setMemory(0, PAGE, (byte) 0);
        cq.setMemory(0, PAGE, (byte) 0);
        data.setMemory(0, PAGE, (byte) 0);
        long timeout = Math.max(TIMEOUT_MS, (cap >>> 24 & 0xFF) * 500); // CAP.TO: 500 ms units
        bar.write32(CC, 0);
        awaitReady(bar, false, timeout);
        bar.write32(AQA, (ENTRIES - 1) << 16 | (ENTRIES - 1));
        bar.write64(ASQ, IOVA);
        bar.write64(ACQ, IOVA + PAGE);
        bar.write32(CC, CC_ENABLE);
        awaitReady(bar, true, timeout);
        // Identify Controller into the third page: CDW0 opcode and command id, PRP1, CDW10 CNS
        sq.putInt(0, OPC_IDENTIFY | CID << 16);
        sq.putLong(24, IOVA + 2 * PAGE);
        sq.putInt(40, CNS_CONTROLLER);
        int stride = 4 << (int) (cap >>> 32 & 0xF); // CAP.DSTRD
        vector0.poll();
        bar.write32(DOORBELLS, 1); // admin SQ tail
        long n = vector0.await(TIMEOUT_MS);
        e.isTrue("the completion signalled MSI-X vector 0 within " + TIMEOUT_MS + " ms", n > 0);
        int dw3 = cq.getIntVolatile(12);
        e.equal("CQE command id", CID, dw3 & 0xFFFF);
        e.equal("CQE phase tag", 1, dw3 >>> 16 & 1);
        e.equal("CQE status", 0, dw3 >>> 17);
        bar.write32(DOORBELLS + stride, 1); // admin CQ head
        e.equal("identify VID", VENDOR, data.getShort(0) & 0xFFFF);
        String sn = new String(bytes(data, 4, 20), StandardCharsets.US_ASCII);
        String mn = new String(bytes(data, 24, 40), StandardCharsets.US_ASCII);
        e.bytes("identify SN", String.format("%-20s", SERIAL).getBytes(StandardCharsets.US_ASCII), data, 4);
        return "Identify Controller completed on MSI-X vector 0 (eventfd count " + n + "): VID 0x"
                + Integer.toHexString(data.getShort(0) & 0xFFFF) + ", SN '" + sn.trim() + "', MN '" + mn.trim() + "'";
    }

    private static byte[] bytes(final UnsafeBuffer b, final int offset, final int length) {
        byte[] out = new byte[length];
        b.getBytes(offset, out);
        return out;
    }

    private static void awaitReady(final BarMapping bar, final boolean ready, final long timeoutMs)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (((bar.read32(CSTS) & CSTS_RDY) != 0) != ready) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("CSTS.RDY not " + (ready ? 1 : 0) + " after " + timeoutMs + " ms (CSTS 0x"
                        + Integer.toHexString(bar.read32(CSTS)) + ")");
            }
            Thread.sleep(10);
        }
    }

    static List<String> names() {
        return List.of("nvme.registers", "nvme.msix-info", "nvme.identify-msix");
    }
}
