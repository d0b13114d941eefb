package io.jhca.tests.vfio.guest;

import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.memory.PagemapIova;
import io.jhca.pci.PciSysfs;
import io.jhca.vfio.BarMapping;
import io.jhca.vfio.DmaMapping;
import io.jhca.vfio.VfioContainer;
import io.jhca.vfio.VfioDevice;

/**
 * The path a device model on the host takes (issue 9): ivshmem-plain's BAR2 is a shared-memory file on the host,
 * and the guest's RAM is another, in which a guest-physical address is the file offset (q35 below 0xB0000000).
 * The host side (io.jhca.tests.vfio.HostBarServer) answers through the BAR what it read from guest RAM.
 *
 * <p>BAR2 layout, little-endian u64s: 0x00 written by the host before boot; 0x08 the guest's answer (its
 * inverse); 0x100 GPA, 0x108 length, 0x110 request (1, written last) from the guest; 0x118 acknowledgement (1)
 * from the host, after it copied the bytes at that GPA to BAR2 0x1000 and wrote their inverse into guest RAM at
 * GPA + length.
 */
public final class IvshmemChecks {

    static final int VENDOR = 0x1af4;
    static final int DEVICE = 0x1110;
    /** ivshmem's shared memory (docs/specs/ivshmem-spec.rst: BAR0 registers, BAR1 MSI-X, BAR2 memory). */
    private static final int BAR2 = 2;
    public static final int HOST_WORD = 0x00;
    public static final int GUEST_WORD = 0x08;
    public static final int REQUEST_GPA = 0x100;
    public static final int REQUEST_LENGTH = 0x108;
    public static final int REQUEST = 0x110;
    public static final int ACK = 0x118;
    public static final int COPY = 0x1000;
    /** Bytes the host copies each way: half of a page, the other half receives the host's write. */
    public static final int LENGTH = 2048;
    private static final int PAGE = 4096;
    private static final long ACK_TIMEOUT_MS = 60_000;

    private final Checks checks;
    private final VfioContainer container;
    private final long seed;
    private final long hostWord;

    IvshmemChecks(final Checks checks, final VfioContainer container, final long seed, final long hostWord) {
        this.checks = checks;
        this.container = container;
        this.seed = seed;
        this.hostWord = hostWord;
    }

    void run(final PciSysfs sysfs) throws Exception {
        var functions = sysfs.find(VENDOR, DEVICE);
        if (functions.size() != 1) {
            checks.skipped("ivshmem.open", "expected one 1af4:1110 function, found " + functions);
            return;
        }
        try (VfioDevice ivshmem = container.openDevice(functions.get(0));
             BarMapping bar = ivshmem.mapBar(BAR2);
             DmaRegion ram = DmaMemory.allocate(DmaOptions.of(PAGE));
             PagemapIova pagemap = new PagemapIova()) {
            checks.run("ivshmem.bar2-host-word", e -> {
                e.equal("BAR2 size (the 32 MiB memory file)", 32 << 20, bar.length());
                e.equal("the word the host wrote at BAR2 0 before boot", hostWord, bar.read64(HOST_WORD));
                bar.write64(GUEST_WORD, ~hostWord);
                return "read 0x" + Long.toHexString(hostWord) + " written by the host, answered its inverse";
            });
            checks.run("ivshmem.guest-ram-by-gpa", e -> {
                UnsafeBuffer page = ram.buffer();
                byte[] pattern = new byte[LENGTH];
                new Random(seed).nextBytes(pattern);
                page.putBytes(0, pattern);
                page.setMemory(LENGTH, LENGTH, (byte) 0);
                long gpa = pagemap.toIova(ram.address());
                // the model's way: IOVA = guest-physical address, so a device DMA and a host reading the RAM file
                // at that offset agree; the mapping also pins the page
                DmaMapping m = container.mapDma(ram.address(), gpa, PAGE);
                try {
                    bar.write64(ACK, 0);
                    bar.write64(REQUEST_GPA, gpa);
                    bar.write64(REQUEST_LENGTH, LENGTH);
                    bar.write64(REQUEST, 1);
                    long deadline = System.nanoTime() + ACK_TIMEOUT_MS * 1_000_000L;
                    while (bar.read64(ACK) != 1) {
                        if (System.nanoTime() > deadline) {
                            throw new AssertionError("no answer from the host within " + ACK_TIMEOUT_MS + " ms");
                        }
                        Thread.sleep(20);
                    }
                    byte[] copied = new byte[LENGTH];
                    for (int i = 0; i < LENGTH; i += 8) {
                        long v = bar.read64(COPY + i);
                        for (int k = 0; k < 8; k++) {
                            copied[i + k] = (byte) (v >>> 8 * k);
                        }
                    }
                    e.bytes("what the host read at GPA 0x" + Long.toHexString(gpa) + " of the RAM file",
                            pattern, new UnsafeBuffer(copied), 0);
                    byte[] inverse = new byte[LENGTH];
                    for (int i = 0; i < LENGTH; i++) {
                        inverse[i] = (byte) ~pattern[i];
                    }
                    e.bytes("what the host wrote into the RAM file at GPA + " + LENGTH, inverse, page, LENGTH);
                } finally {
                    container.unmapDma(m);
                }
                return LENGTH + " bytes at GPA 0x" + Long.toHexString(gpa) + " read by the host through the RAM file,"
                        + " its answer written back there (seed " + seed + ")";
            });
        }
    }

    static List<String> names() {
        return List.of("ivshmem.bar2-host-word", "ivshmem.guest-ram-by-gpa");
    }
}
