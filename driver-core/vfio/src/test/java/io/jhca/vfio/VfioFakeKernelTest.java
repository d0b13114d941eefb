package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.pci.PciAddress;

/** The container, group and device against a fake kernel: the open sequence, every struct, DMA, IRQs, use after close. */
class VfioFakeKernelTest {

    private static final PciAddress BDF = PciAddress.parse(FakeKernel.DEVICE);

    static VfioContainer container(final FakeKernel k) {
        return VfioContainer.open(k, Path.of("/dev"), false);
    }

    @Test
    void opensLikeRdmaCoreAndReadsTheIommuInfo() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k)) {
            assertEquals(0, c.apiVersion());
            assertEquals(IommuType.TYPE1V2, c.iommuType());
            assertFalse(c.iommuType().unsafe());
            final VfioGroup g = c.openGroup(FakeKernel.GROUP);
            assertTrue(g.viable());
            assertEquals(VFIO_GROUP_FLAGS_VIABLE | VFIO_GROUP_FLAGS_CONTAINER_SET, g.status());
            final IommuInfo info = c.iommuInfo();
            assertEquals(0x40201000L, info.pageSizes());
            assertEquals(4096, info.minPageSize());
            assertTrue(info.rangesReported());
            assertEquals(List.of(new IovaRange(0, 0xfedfffffL), new IovaRange(0xfef00000L, (1L << 48) - 1)), info.ranges());
            assertEquals(65535, info.dmaAvailable());
            assertEquals(65535, c.mappingLimit());
            assertEquals(g, c.openGroup(FakeKernel.GROUP), "the same group again");
        }
        assertEquals(Map.of(), k.openFds());
    }

    @Test
    void deviceInfoRegionsAndTheCapabilityChain() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            assertEquals(FakeKernel.DEVICE, d.name());
            assertEquals(9, d.info().numRegions());
            assertTrue(d.info().resetSupported());
            final RegionInfo bar0 = d.regionInfo(0);
            assertEquals(FakeKernel.BAR0_SIZE, bar0.size());
            assertTrue(bar0.mappable() && bar0.readable() && bar0.writable());
            assertEquals(List.of(), bar0.capabilities());
            final RegionInfo bar2 = d.regionInfo(2);
            assertEquals(2L << 40, bar2.offset());
            assertEquals(1, bar2.capabilities().size());
            assertEquals(VFIO_REGION_INFO_CAP_SPARSE_MMAP, bar2.capabilities().get(0).id());
            assertEquals(List.of(new RegionInfo.SparseArea(0, 0x2000), new RegionInfo.SparseArea(0x3000, 0xd000)),
                bar2.sparseAreas());
            assertEquals(0x100, d.regionInfo(VFIO_PCI_CONFIG_REGION_INDEX).size());
            assertThrows(IllegalArgumentException.class, () -> d.regionInfo(9));
        }
    }

    @Test
    void barIsAnMmioWindowAndLittleEndianRegisters() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            final BarMapping bar = d.mapBar(0);
            assertEquals(FakeKernel.BAR0_SIZE, bar.length());
            bar.write32(8, 0x11223344);
            assertEquals(0x11223344, bar.read32(8));
            final MmioWindow w = bar.window();
            assertEquals(0x44332211, w.getIntBe(8), "the window reads the same bytes big-endian");
            bar.write64(16, 0x0102030405060708L);
            assertEquals(0x0102030405060708L, bar.read64(16));
            bar.write32(FakeKernel.BAR0_SIZE - 4, 0x55667788);
            assertEquals(0x55667788, bar.read32(FakeKernel.BAR0_SIZE - 4), "the last register");
            assertThrows(IndexOutOfBoundsException.class, () -> bar.read32(FakeKernel.BAR0_SIZE), "one past the last");
            assertThrows(IndexOutOfBoundsException.class, () -> bar.write64(FakeKernel.BAR0_SIZE - 4, 1), "across the end");
            assertThrows(IndexOutOfBoundsException.class, () -> bar.read32(FakeKernel.BAR0_SIZE - 2));
            assertThrows(IllegalArgumentException.class, () -> bar.read32(2));
            assertEquals(1, k.liveMmaps());
            final VfioException io = assertThrows(VfioException.class, () -> d.mapBar(4));
            assertTrue(io.getMessage().contains("cannot be mmapped"), io.getMessage());
            final VfioException none = assertThrows(VfioException.class, () -> d.mapBar(1));
            assertTrue(none.getMessage().contains("size 0"), none.getMessage());
            bar.close();
            assertEquals(0, k.liveMmaps());
            assertThrows(VfioException.class, () -> bar.read32(8), "use after close is an exception");
            assertThrows(IndexOutOfBoundsException.class, () -> w.getIntBe(8), "a window handed out earlier is detached");
            assertThrows(IndexOutOfBoundsException.class, () -> w.putIntBe(8, 1));
        }
        assertEquals(0, k.liveMmaps());
    }

    @Test
    void regionsThatCannotBeMappedAreReadAndWrittenThroughTheFd() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            d.writeRegion(4, 0x10, 8, 0x1122334455667788L);
            assertEquals(0x88, k.bar4[0x10] & 0xff, "little-endian");
            assertEquals(0x1122334455667788L, d.readRegion(4, 0x10, 8));
            assertEquals(0x55667788L, d.readRegion(4, 0x10, 4));
            assertEquals(0x3344L, d.readRegion(4, 0x14, 2) & 0xffff);
            final IndexOutOfBoundsException past = assertThrows(IndexOutOfBoundsException.class, () -> d.readRegion(4, 0x1c, 8));
            assertEquals("0000:00:03.0: pread BAR4 0x1c of 8 bytes is outside (or misaligned in) the region's 0x20 bytes",
                past.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> d.writeRegion(4, 0x11, 2, 0), "misaligned");
            assertThrows(IllegalArgumentException.class, () -> d.readRegion(4, 0, 3));
            assertThrows(IndexOutOfBoundsException.class, () -> d.readRegion(1, 0, 4), "BAR1 is empty: nothing to read");
            final VfioException rom = assertThrows(VfioException.class, () -> d.writeRegion(6, 0, 4, 1));
            assertTrue(rom.getMessage().contains("the region is not writable"), rom.getMessage());
        }
    }

    @Test
    void configSpaceBusMasterAndReset() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            assertEquals(0x1234, d.readConfig(0, 2));
            assertEquals(0x11e8, d.readConfig(2, 2));
            assertEquals(0x11e81234, d.readConfig(0, 4));
            assertFalse(d.busMaster());
            d.enableBusMaster();
            assertEquals(PCI_COMMAND_INTX_DISABLE | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, k.commandRegister(),
                "read-modify-write keeps INTx disable");
            assertTrue(d.busMaster());
            d.writeConfig(0x40, 1, 0xab);
            assertEquals(0xab, d.readConfig(0x40, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> d.readConfig(0xfe, 4));
            assertThrows(IndexOutOfBoundsException.class, () -> d.readConfig(0x41, 2), "misaligned");
            assertThrows(IllegalArgumentException.class, () -> d.readConfig(0, 3));
            d.reset();
            assertEquals(1, k.resets);
        }
        final FakeKernel noReset = new FakeKernel();
        noReset.resetSupported = false;
        try (VfioContainer c = container(noReset); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            final VfioException e = assertThrows(VfioException.class, d::reset);
            assertTrue(e.getMessage().startsWith("0000:00:03.0: VFIO_DEVICE_RESET: "), e.getMessage());
            assertEquals(0, noReset.resets, "refused before the kernel is asked");
        }
    }

    @Test
    void msixVectorZeroIsWiredWithAllVectorsAndSignalsItsEventfd() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            final IrqInfo msix = d.irqInfo(VFIO_PCI_MSIX_IRQ_INDEX);
            assertEquals(4, msix.count());
            assertTrue(msix.eventfd());
            final VfioInterrupt v0 = d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 0);
            final int[] set = k.irqSets.get(0);
            assertEquals(VFIO_PCI_MSIX_IRQ_INDEX, set[0]);
            assertEquals(0, set[1]);
            assertEquals(4, set[2], "rdma-core wires every vector in the first SET_IRQS");
            assertEquals(VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, set[3]);
            assertEquals(v0.fd(), set[4]);
            assertEquals(-1, set[5]);
            assertEquals(0, v0.poll(), "nothing yet");
            assertEquals(0, v0.await(1), "times out");
            k.fire(VFIO_PCI_MSIX_IRQ_INDEX, 0);
            k.fire(VFIO_PCI_MSIX_IRQ_INDEX, 0);
            assertEquals(2, v0.await(10_000), "both signals, counted once");
            assertEquals(0, v0.poll());
            final VfioInterrupt v3 = d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 3);
            final int[] later = k.irqSets.get(1);
            assertEquals(3, later[1]);
            assertEquals(1, later[2]);
            assertEquals(v3.fd(), later[4]);
            assertThrows(VfioException.class, () -> d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 3), "already wired");
            assertThrows(VfioException.class, () -> d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 4), "no such vector");
            v3.close();
            final int[] off = k.irqSets.get(2);
            assertEquals(-1, off[4], "vector 3 unwired with fd -1");
            assertThrows(VfioException.class, v3::poll);
        }
        final int[] last = k.irqSets.get(k.irqSets.size() - 1);
        assertEquals(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, last[3], "device close turns MSI-X off");
        assertEquals(0, last[2]);
        assertEquals(Map.of(), k.openFds());
    }

    @Test
    void allocatedDmaMapsRealMemoryAndUnmapsOnClose() {
        final FakeKernel k = new FakeKernel();
        final VfioContainer c = container(k);
        {
            c.openGroup(FakeKernel.GROUP);
            final DmaRegion a = DmaMemory.allocate(DmaOptions.of(4096).iovaTranslator(c.dma()));
            final DmaRegion b = c.allocate(DmaOptions.of(3 * 4096));
            assertEquals(2, k.dma.size());
            final long ia = a.iova(0);
            final long ib = b.iova(0);
            assertEquals(0L, ia % 4096);
            assertEquals(0L, ib % (8 * 1024), "aligned to the largest power of two in its size");
            assertEquals(ib + 5000, b.iova(5000));
            assertEquals(a.address(), k.dma.get(ia)[0], "MAP_DMA was given the region's address");
            assertEquals(3 * 4096, k.dma.get(ib)[1]);
            final DmaMapping cmdq = c.mapDmaAligned(0x6000_0000L, 4096, 64 * 1024);
            assertEquals(0L, cmdq.iova() % (64 * 1024), "size-aligned as asked");
            c.unmapDma(cmdq);
            final int calls = k.calls();
            final VfioException taken = assertThrows(VfioException.class, () -> c.mapDma(0x5000_0000L, ib + 4096, 4096));
            assertTrue(taken.getMessage().contains("is not free"), taken.getMessage());
            assertEquals(calls, k.calls(), "an IOVA the allocator handed out is refused before the kernel is asked");
            a.close();
            assertEquals(1, k.dma.size());
            final DmaRegion again = c.allocate(DmaOptions.of(4096));
            assertEquals(ia, again.iova(0), "a freed IOVA is reused");
            c.close();
            again.close();
            assertEquals(0, k.dma.size(), "the container unmapped what was left");
            assertThrows(VfioException.class, () -> b.iova(0), "translation after the container closed");
            b.close(); // still possible: the memory is released, the mapping is already gone
        }
        assertEquals(Map.of(), k.openFds());
    }

    /** Huge pages (when the machine has some reserved): one mapping per region, its IOVA 2 MiB aligned. */
    @Test
    void hugePageRegionsMapOnceAlignedToTheHugePage() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k)) {
            c.openGroup(FakeKernel.GROUP);
            c.mapDma(0x1000_0000L, 0x1000L, 4096); // something below, so alignment has work to do
            final DmaRegion r;
            try {
                r = c.allocate(DmaOptions.of(4 << 20).hugePages(true));
            } catch (final io.jhca.memory.HugePagesUnavailableException none) {
                org.junit.jupiter.api.Assumptions.abort("no 2 MiB huge pages reserved here: " + none.getMessage());
                return;
            }
            assertEquals(2 << 20, r.pageSize());
            assertEquals(2, k.dma.size());
            assertEquals(0L, r.iova(0) % (2 << 20));
            assertEquals(4L << 20, k.dma.get(r.iova(0))[1]);
            r.close();
            assertEquals(1, k.dma.size());
        }
    }

    @Test
    void physicalPolicyMapsIovaContiguousRunsAtThePhysicalAddress() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k)) {
            c.openGroup(FakeKernel.GROUP);
            final long va = 0x7f0000000000L;
            // pages 0-1 contiguous at 0x5000, page 2 elsewhere, page 3 right after page 2
            final long[] pa = {0x5000, 0x6000, 0x90000, 0x91000};
            final VfioIova phys = c.physicalDma(addr -> pa[(int) ((addr - va) / 4096)] + ((addr - va) & 0xfff));
            phys.map(va, 4 * 4096);
            assertEquals(2, k.dma.size());
            assertEquals(2 * 4096, k.dma.get(0x5000L)[1]);
            assertEquals(va, k.dma.get(0x5000L)[0]);
            assertEquals(va + 2 * 4096, k.dma.get(0x90000L)[0]);
            assertEquals(0x90010L, phys.toIova(va + 2 * 4096 + 0x10));
            assertEquals(0x6fffL, phys.toIova(va + 2 * 4096 - 1));
            assertThrows(IllegalArgumentException.class, () -> phys.map(va + 4096, 4096), "overlap");
            phys.unmap(va, 4 * 4096);
            assertEquals(0, k.dma.size());
        }
    }

    @Test
    void hugePagesGiveOneRunPerHugePage() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k)) {
            c.openGroup(FakeKernel.GROUP);
            final long huge = 2L << 20;
            final long va = 0x7f0000000000L;
            final long[] base = {0x40000000L, 0x10000000L}; // two 2 MiB pages, not adjacent
            final VfioIova phys = c.physicalDma(addr -> base[(int) ((addr - va) / huge)] + ((addr - va) % huge));
            phys.map(va, 2 * huge);
            assertEquals(2, k.dma.size());
            assertEquals(huge, k.dma.get(0x40000000L)[1]);
            assertEquals(huge, k.dma.get(0x10000000L)[1]);
        }
    }

    @Test
    void theMappingLimitIsRespectedBeforeTheKernelIsAsked() {
        final FakeKernel k = new FakeKernel();
        k.dmaAvail = 3;
        try (VfioContainer c = container(k)) {
            c.openGroup(FakeKernel.GROUP);
            assertEquals(3, c.mappingLimit());
            for (int i = 0; i < 3; i++) {
                c.mapDma(0x1000_0000L + i * 4096, 0x100000L + i * 4096, 4096);
            }
            final int before = k.calls();
            final VfioException e = assertThrows(VfioException.class, () -> c.mapDma(0x2000_0000L, 0x200000L, 4096));
            assertTrue(e.getMessage().contains("mapping limit of 3"), e.getMessage());
            assertEquals(before, k.calls(), "refused without a MAP_DMA");
            final long va = 0x7f0000000000L;
            c.unmapDma(c.mappings().get(0));
            final VfioIova phys = c.physicalDma(addr -> 0x50000000L - (addr - va) * 2); // every page its own run
            assertThrows(VfioException.class, () -> phys.map(va, 2 * 4096), "two runs, room for one");
            assertEquals(2, k.dma.size(), "nothing half-mapped");
        }
    }

    @Test
    void refusalsNameTheDeviceTheCallAndErrno() {
        final FakeKernel busy = new FakeKernel().failKind("ioctl 0x" + Integer.toHexString(VFIO_GROUP_SET_CONTAINER), Errno.EBUSY);
        try (VfioContainer c = container(busy)) {
            final VfioException e = assertThrows(VfioException.class, () -> c.openGroup(FakeKernel.GROUP));
            assertEquals("group " + FakeKernel.GROUP + ": VFIO_GROUP_SET_CONTAINER failed: EBUSY (Device or resource busy)",
                e.getMessage());
            assertEquals(Errno.EBUSY, e.errno());
            assertEquals("VFIO_GROUP_SET_CONTAINER", e.call());
        }
        assertEquals(Map.of(), busy.openFds());

        final FakeKernel notViable = new FakeKernel();
        notViable.viable = false;
        try (VfioContainer c = container(notViable)) {
            final VfioException e = assertThrows(VfioException.class, () -> c.openGroup(FakeKernel.GROUP));
            assertTrue(e.getMessage().contains("not viable"), e.getMessage());
        }
        assertEquals(Map.of(), notViable.openFds());

        final FakeKernel noVfio = new FakeKernel();
        noVfio.containerNodeExists = false;
        final VfioException e = assertThrows(VfioException.class, () -> container(noVfio));
        assertEquals("container: open /dev/vfio/vfio failed: ENOENT (No such file or directory): the vfio module is not"
            + " loaded (modprobe vfio-pci)", e.getMessage());

        try (VfioContainer c = container(new FakeKernel())) {
            final VfioException other = assertThrows(VfioException.class,
                () -> c.openDevice(PciAddress.parse("0000:00:04.0"), FakeKernel.GROUP));
            assertTrue(other.getMessage().startsWith("0000:00:04.0: VFIO_GROUP_GET_DEVICE_FD failed: ENODEV"), other.getMessage());
            c.openDevice(BDF, FakeKernel.GROUP);
            final VfioException twice = assertThrows(VfioException.class, () -> c.openDevice(BDF, FakeKernel.GROUP));
            assertTrue(twice.getMessage().contains("EBUSY"), twice.getMessage());
        }
    }

    @Test
    void noIommuModeOnlyWhenAskedForAndMarkedUnsafe() {
        final FakeKernel k = new FakeKernel();
        k.noIommu = true;
        final VfioException refused = assertThrows(VfioException.class, () -> container(k));
        assertTrue(refused.getMessage().startsWith("container: VFIO_CHECK_EXTENSION(VFIO_TYPE1v2_IOMMU): the kernel offers"
            + " no Type1v2 IOMMU: "), refused.getMessage());
        assertTrue(refused.getMessage().contains("intel_iommu=on"), refused.getMessage());
        assertEquals(Map.of(), k.openFds());
        try (VfioContainer c = VfioContainer.open(k, Path.of("/dev"), true)) {
            assertEquals(IommuType.NOIOMMU, c.iommuType());
            assertTrue(c.iommuType().unsafe());
            final VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP);
            assertEquals("group noiommu-" + FakeKernel.GROUP, d.group().name());
            final VfioException noMap = assertThrows(VfioException.class, c::dma);
            assertTrue(noMap.getMessage().contains("use physicalDma()"), noMap.getMessage());
            final VfioIova phys = c.physicalDma(va -> va - 0x7f0000000000L + 0x100000L);
            phys.map(0x7f0000000000L, 8192);
            assertEquals(0, k.dma.size(), "no MAP_DMA without an IOMMU");
            assertEquals(0x101010L, phys.toIova(0x7f0000001010L), "the device is given physical addresses");
            phys.unmap(0x7f0000000000L, 8192);
        }
        assertEquals(Map.of(), k.openFds());
    }

    @Test
    void aFailedEventfdLeavesTheIndexUntouched() {
        final FakeKernel k = new FakeKernel().failKind("eventfd", Errno.EMFILE);
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            final VfioException e = assertThrows(VfioException.class, () -> d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 0));
            assertEquals("0000:00:03.0: eventfd failed: EMFILE (Too many open files)", e.getMessage());
        }
        assertEquals(List.of(), k.irqSets, "nothing was wired, so nothing is unwired at close");
    }

    @Test
    void intxIsUnmaskedWithActionUnmask() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = container(k); VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP)) {
            final IrqInfo intx = d.irqInfo(VFIO_PCI_INTX_IRQ_INDEX);
            assertTrue(intx.automasked() && intx.maskable());
            final VfioInterrupt irq = d.enableInterrupt(VFIO_PCI_INTX_IRQ_INDEX, 0);
            k.fire(VFIO_PCI_INTX_IRQ_INDEX, 0);
            assertEquals(1, irq.await(10_000));
            d.unmaskIntx();
            final int[] unmask = k.irqSets.get(k.irqSets.size() - 1);
            assertEquals(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK, unmask[3]);
            assertEquals(VFIO_PCI_INTX_IRQ_INDEX, unmask[0]);
            assertEquals(1, unmask[2]);
        }
    }

    @Test
    void malformedCapabilityChainsAreRefusedNotFollowed() {
        final org.agrona.concurrent.UnsafeBuffer b = new org.agrona.concurrent.UnsafeBuffer(new byte[64]);
        b.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_CAPS);
        b.putInt(REGION_INFO_CAP_OFFSET, 32);
        b.putShort(32, (short) 9);
        b.putInt(32 + CAP_HEADER_NEXT, 32); // points at itself
        final VfioException loop = assertThrows(VfioException.class, () -> VfioDevice.parseRegionInfo(b, 64, "dev"));
        assertTrue(loop.getMessage().contains("does not follow"), loop.getMessage());
        b.putInt(32 + CAP_HEADER_NEXT, 60); // header would run past the buffer
        assertThrows(VfioException.class, () -> VfioDevice.parseRegionInfo(b, 64, "dev"));
        b.putInt(32 + CAP_HEADER_NEXT, 0);
        b.putShort(32, (short) VFIO_REGION_INFO_CAP_SPARSE_MMAP);
        b.putInt(32 + SPARSE_MMAP_NR_AREAS, 5); // five areas do not fit in 64 bytes
        assertThrows(VfioException.class, () -> VfioDevice.parseRegionInfo(b, 64, "dev"));
        b.putInt(32 + SPARSE_MMAP_NR_AREAS, 1);
        b.putLong(32 + SPARSE_MMAP_AREAS, 0x1000);
        b.putLong(32 + SPARSE_MMAP_AREAS + 8, 0x2000);
        assertEquals(List.of(new RegionInfo.SparseArea(0x1000, 0x2000)), VfioDevice.parseRegionInfo(b, 64, "dev").sparseAreas());
    }

    @Test
    void useAfterCloseIsAnExceptionEverywhere() {
        final FakeKernel k = new FakeKernel();
        final VfioContainer c = container(k);
        final VfioGroup g = c.openGroup(FakeKernel.GROUP);
        final VfioDevice d = g.openDevice(BDF);
        final BarMapping bar = d.mapBar(0);
        final VfioInterrupt irq = d.enableInterrupt(VFIO_PCI_MSI_IRQ_INDEX, 0);
        c.close();
        c.close();
        assertTrue(d.isClosed() && g.isClosed() && bar.isClosed() && irq.isClosed());
        assertThrows(VfioException.class, () -> bar.read32(0));
        assertThrows(VfioException.class, irq::poll);
        assertThrows(VfioException.class, () -> irq.await(1));
        assertThrows(VfioException.class, () -> d.readConfig(0, 4));
        assertThrows(VfioException.class, () -> d.mapBar(0));
        assertThrows(VfioException.class, g::status);
        assertThrows(VfioException.class, () -> c.openGroup(FakeKernel.GROUP));
        assertThrows(VfioException.class, () -> c.mapDma(0x1000, 0x1000, 0x1000));
        d.close();
        g.close();
        assertEquals(Map.of(), k.openFds());
        assertEquals(0, k.liveMmaps());
    }

    /**
     * The whole open sequence, a BAR, an interrupt and DMA, with call N failing for every N: each run ends in an
     * exception naming the call (or in success), and after close nothing is left open, mapped or DMA-mapped.
     */
    @Test
    void everyFailurePathLeaksNothing() {
        final FakeKernel clean = new FakeKernel();
        scenario(clean);
        final int total = clean.calls();
        assertTrue(total > 20, "the scenario makes " + total + " calls");
        int failures = 0;
        for (int n = 1; n <= total; n++) {
            final FakeKernel k = new FakeKernel().failCall(n, Errno.EIO);
            try {
                scenario(k);
            } catch (final VfioException e) {
                failures++;
                assertTrue(e.getMessage().contains("EIO (Input/output error)") || e.getSuppressed().length > 0
                    || e.getMessage().contains("unmapped 0x0"), "call " + n + ": " + e.getMessage());
            }
            assertEquals(Map.of(), k.openFds(), "call " + n + " failing leaked fds");
            assertEquals(0, k.liveMmaps(), "call " + n + " failing leaked a BAR mapping");
            assertEquals(0, k.dma.size(), "call " + n + " failing leaked a DMA mapping");
        }
        assertNotEquals(0, failures);
    }

    private static void scenario(final FakeKernel k) {
        final VfioContainer c = container(k);
        try {
            final VfioDevice d = c.openDevice(BDF, FakeKernel.GROUP);
            final BarMapping bar = d.mapBar(0);
            bar.write32(0, 1);
            d.enableBusMaster();
            final VfioInterrupt irq = d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 0);
            d.enableInterrupt(VFIO_PCI_MSIX_IRQ_INDEX, 1);
            irq.poll();
            c.dma().map(0x7f0000000000L, 8192);
            c.mapDma(0x7f0000100000L, 0x7000000L, 4096);
            final long va = 0x7f0000200000L;
            final int before = k.dma.size();
            try {
                c.physicalDma(a -> a - va + (a - va >= 4096 ? 0x9000000L : 0x8000000L)).map(va, 3 * 4096); // two runs
            } catch (final VfioException e) {
                assertEquals(before, k.dma.size(), "a failed map leaves none of its runs mapped: " + e.getMessage());
                throw e;
            }
            irq.close();
            bar.close();
            d.close();
        } finally {
            c.close();
        }
    }
}
