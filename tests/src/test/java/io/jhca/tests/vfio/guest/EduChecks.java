package io.jhca.tests.vfio.guest;

import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.pci.PciSysfs;
import io.jhca.vfio.BarMapping;
import io.jhca.vfio.DmaMapping;
import io.jhca.vfio.VfioContainer;
import io.jhca.vfio.VfioDevice;
import io.jhca.vfio.VfioInterrupt;

/**
 * The vfio layer against QEMU's edu device (register map and DMA engine: QEMU docs/specs/edu.rst and
 * hw/misc/edu.c): registers, DMA both ways with content checks, MSI through an eventfd, and DMA through IOVAs the
 * IOMMU does not map (never mapped, and unmapped after use), which it must refuse.
 */
final class EduChecks {

    static final int VENDOR = 0x1234;
    static final int DEVICE = 0x11e8;

    // edu.rst: BAR0 registers
    private static final int ID = 0x00; // 0x010000ed: major 1, minor 0, 0xed
    private static final int LIVENESS = 0x04; // reads back the bitwise inverse of what was written
    private static final int FACTORIAL = 0x08;
    private static final int STATUS = 0x20; // bit 0: factorial computing
    private static final int IRQ_STATUS = 0x24;
    private static final int IRQ_RAISE = 0x60;
    private static final int IRQ_ACK = 0x64;
    private static final int DMA_SRC = 0x80;
    private static final int DMA_DST = 0x88;
    private static final int DMA_COUNT = 0x90;
    private static final int DMA_CMD = 0x98;
    private static final int DMA_START = 0x1; // also reads 1 while the transfer runs
    private static final int DMA_TO_RAM = 0x2; // direction: 0 RAM -> edu, 1 edu -> RAM (edu.c EDU_DMA_TO_PCI)
    private static final int DMA_IRQ = 0x4; // raise interrupt 0x100 when done
    private static final int DMA_DONE_IRQ = 0x100;
    /** The device's 4 KiB DMA buffer, as device addresses; a transfer outside it aborts QEMU (edu_check_range). */
    private static final long DEVICE_BUFFER = 0x40000;
    private static final int DEVICE_BUFFER_SIZE = 4096;
    /**
     * Bytes per transfer: QEMU 7.2's edu_check_range wants the end address strictly inside the buffer, so a transfer
     * that ends at its last byte (0x40000 + 4096) aborts QEMU as "out of bounds"; stay a little short of it.
     */
    private static final int TRANSFER = 4032;
    private static final int PAGE = 4096;
    /** VFIO_PCI_MSI_IRQ_INDEX (linux/vfio.h); edu has one MSI vector and no MSI-X. */
    private static final int MSI = 1;

    // IOVAs stay below edu's default 28-bit DMA mask (edu.c dma_mask); RAM pages: A source, B destination, C
    // mapped alone so that it can be unmapped again
    private static final long IOVA_AB = 0x100000;
    private static final long IOVA_C = 0x102000;
    private static final long IOVA_NEVER_MAPPED = 0x8000000;
    private static final long TIMEOUT_MS = 5000;

    private final Checks checks;
    private final VfioContainer container;
    private final long seed;

    EduChecks(final Checks checks, final VfioContainer container, final long seed) {
        this.checks = checks;
        this.container = container;
        this.seed = seed;
    }

    void run(final PciSysfs sysfs) throws Exception {
        var functions = sysfs.find(VENDOR, DEVICE);
        if (functions.size() != 1) {
            checks.skipped("edu.open", "expected one 1234:11e8 function, found " + functions);
            return;
        }
        try (VfioDevice edu = container.openDevice(functions.get(0));
             BarMapping bar = edu.mapBar(0);
             DmaRegion ram = DmaMemory.allocate(DmaOptions.of(3 * PAGE))) {
            checks.run("edu.open", e -> {
                e.isTrue("BAR0 of at least 4 KiB", bar.length() >= PAGE);
                return edu + ", BAR0 " + bar.length() + " bytes";
            });
            registers(bar);
            edu.enableBusMaster();
            UnsafeBuffer a = ram.buffer(0, PAGE);
            UnsafeBuffer b = ram.buffer(PAGE, PAGE);
            UnsafeBuffer c = ram.buffer(2 * PAGE, PAGE);
            DmaMapping ab = container.mapDma(ram.address(), IOVA_AB, 2 * PAGE);
            DmaMapping cMap = container.mapDma(ram.address() + 2 * PAGE, IOVA_C, PAGE);
            byte[] pattern = new byte[TRANSFER];
            new Random(seed).nextBytes(pattern);
            checks.run("edu.dma-round-trip", e -> {
                a.putBytes(0, pattern);
                b.setMemory(0, PAGE, (byte) 0x5A);
                dma(bar, IOVA_AB, DEVICE_BUFFER, TRANSFER, 0);
                dma(bar, DEVICE_BUFFER, IOVA_AB + PAGE, TRANSFER, DMA_TO_RAM);
                e.bytes("RAM -> edu -> RAM, " + TRANSFER + " random bytes (seed " + seed + ")", pattern, b, 0);
                e.equal("the byte after the transfer", 0x5A, b.getByte(TRANSFER));
                return TRANSFER + " bytes RAM (iova 0x100000) -> edu 0x40000 -> RAM (iova 0x101000), seed " + seed;
            });
            try (VfioInterrupt msi = edu.enableInterrupt(MSI, 0)) {
                interrupts(bar, msi);
            }
            unmappedIovas(bar, container, pattern, b, c, cMap);
            container.unmapDma(ab);
        }
    }

    private void registers(final BarMapping bar) {
        checks.run("edu.id", e -> {
            e.equal("identification register", 0x010000ed, bar.read32(ID));
            return "0x010000ed";
        });
        checks.run("edu.liveness", e -> {
            Random r = new Random(seed);
            for (int i = 0; i < 4; i++) {
                int v = r.nextInt();
                bar.write32(LIVENESS, v);
                e.equal("liveness after writing 0x" + Integer.toHexString(v), ~v & 0xFFFFFFFFL,
                        bar.read32(LIVENESS) & 0xFFFFFFFFL);
            }
            return "4 values read back inverted";
        });
        checks.run("edu.factorial", e -> {
            bar.write32(FACTORIAL, 10);
            awaitClear(bar, STATUS, 0x1, "factorial computing");
            e.equal("10!", 3628800, bar.read32(FACTORIAL));
            return "10! = 3628800";
        });
    }

    private void interrupts(final BarMapping bar, final VfioInterrupt msi) {
        checks.run("edu.msi-raise", e -> {
            e.equal("eventfd before any interrupt", 0, msi.poll());
            int value = 0x1234;
            bar.write32(IRQ_RAISE, value);
            long n = msi.await(TIMEOUT_MS);
            e.isTrue("MSI signalled the eventfd within " + TIMEOUT_MS + " ms", n > 0);
            e.equal("interrupt status", value, bar.read32(IRQ_STATUS));
            bar.write32(IRQ_ACK, value);
            e.equal("interrupt status after ack", 0, bar.read32(IRQ_STATUS));
            return "raise 0x1234 -> eventfd count " + n + ", status 0x1234, ack -> 0";
        });
        checks.run("edu.msi-dma-done", e -> {
            msi.poll();
            dma(bar, IOVA_AB, DEVICE_BUFFER, 64, DMA_IRQ);
            long n = msi.await(TIMEOUT_MS);
            e.isTrue("DMA completion signalled the eventfd within " + TIMEOUT_MS + " ms", n > 0);
            e.equal("interrupt status", DMA_DONE_IRQ, bar.read32(IRQ_STATUS));
            bar.write32(IRQ_ACK, DMA_DONE_IRQ);
            return "DMA with command bit 2 -> eventfd count " + n + ", status 0x100";
        });
    }

    private void unmappedIovas(final BarMapping bar, final VfioContainer container, final byte[] pattern,
                               final UnsafeBuffer b, final UnsafeBuffer c, final DmaMapping cMap) throws Exception {
        checks.run("edu.dma-read-never-mapped-iova", e -> {
            // edu's buffer holds the pattern; a read through an IOVA the IOMMU never mapped must bring nothing of
            // RAM into it and be reported as a DMAR fault. QEMU (7.2, seen here) completes the refused read with
            // zeros, so the buffer reads back as zeros.
            dma(bar, IOVA_AB, DEVICE_BUFFER, TRANSFER, 0);
            int logged = KernelLog.lines().size();
            dma(bar, IOVA_NEVER_MAPPED, DEVICE_BUFFER, TRANSFER, 0);
            String fault = KernelLog.await(logged, TIMEOUT_MS, "DMA Read",
                    "fault addr 0x" + Long.toHexString(IOVA_NEVER_MAPPED));
            e.isTrue("a DMAR read fault at 0x8000000 in the kernel log", fault != null);
            b.setMemory(0, PAGE, (byte) 0x5A);
            dma(bar, DEVICE_BUFFER, IOVA_AB + PAGE, TRANSFER, DMA_TO_RAM);
            e.bytes("edu's buffer after the refused read", new byte[TRANSFER], b, 0);
            return "buffer zeroed, kernel: " + fault;
        });
        checks.run("edu.dma-write-unmapped-iova", e -> {
            // C first takes a DMA (the mapping works), then is unmapped and must stay as the CPU left it
            dma(bar, IOVA_AB, DEVICE_BUFFER, TRANSFER, 0);
            c.setMemory(0, PAGE, (byte) 0);
            dma(bar, DEVICE_BUFFER, IOVA_C, TRANSFER, DMA_TO_RAM);
            e.bytes("page C through its mapping", pattern, c, 0);
            container.unmapDma(cMap);
            byte[] marker = new byte[PAGE];
            java.util.Arrays.fill(marker, (byte) 0xA5);
            c.putBytes(0, marker);
            int logged = KernelLog.lines().size();
            dma(bar, DEVICE_BUFFER, IOVA_C, TRANSFER, DMA_TO_RAM);
            String fault = KernelLog.await(logged, TIMEOUT_MS, "DMA Write",
                    "fault addr 0x" + Long.toHexString(IOVA_C));
            e.isTrue("a DMAR write fault at 0x102000 in the kernel log", fault != null);
            e.bytes("page C after a DMA to its unmapped IOVA", marker, c, 0);
            return "kernel: " + fault;
        });
    }

    /** One transfer of {@code count} bytes, waited for; device-side addresses must lie in edu's buffer. */
    private static void dma(final BarMapping bar, final long src, final long dst, final int count, final int flags)
            throws InterruptedException {
        long device = (flags & DMA_TO_RAM) != 0 ? src : dst;
        if (device < DEVICE_BUFFER || count <= 0 || device + count >= DEVICE_BUFFER + DEVICE_BUFFER_SIZE) {
            throw new IllegalArgumentException("edu DMA outside its buffer: 0x" + Long.toHexString(device) + " +" + count);
        }
        bar.write64(DMA_SRC, src);
        bar.write64(DMA_DST, dst);
        bar.write64(DMA_COUNT, count);
        bar.write32(DMA_CMD, DMA_START | flags);
        awaitClear(bar, DMA_CMD, DMA_START, "DMA running");
    }

    private static void awaitClear(final BarMapping bar, final int register, final int bit, final String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while ((bar.read32(register) & bit) != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " still set after " + TIMEOUT_MS + " ms");
            }
            Thread.sleep(10);
        }
    }

    static List<String> names() {
        return List.of("edu.open", "edu.id", "edu.liveness", "edu.factorial", "edu.dma-round-trip", "edu.msi-raise",
                "edu.msi-dma-done", "edu.dma-read-never-mapped-iova", "edu.dma-write-unmapped-iova");
    }
}
