package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.mlx5.spi.Mlx5FunctionSource;
import io.jhca.verbs.WcStatus;
import io.jhca.mlx5.cq.CqeStatus;

/**
 * The SPI side: configuration, ServiceLoader registration, BAR0, the IOMMU table behind allocateDma / mapForDevice,
 * and the CQE syndrome mapping's round trip through rdma-core's reading of it.
 */
class ModelFunctionTest {

    @Test
    void configuration() throws Exception {
        Map<String, InetAddress> d = ModelConfig.parse(ModelConfig.DEFAULT_DEVICES);
        assertEquals(List.of("mlx5_0", "mlx5_1"), List.copyOf(d.keySet()));
        assertEquals(InetAddress.getByName("127.0.0.3"), d.get("mlx5_0"));
        assertEquals(InetAddress.getByName("127.0.0.4"), d.get("mlx5_1"));
        assertTrue(ModelConfig.parse("none").isEmpty());
        assertTrue(ModelConfig.parse(" NONE ").isEmpty());
        assertEquals(InetAddress.getByName("::1"), ModelConfig.parse("x=[::1]").get("x"));
        assertThrows(IllegalArgumentException.class, () -> ModelConfig.parse("mlx5_0"));
        assertThrows(IllegalArgumentException.class, () -> ModelConfig.parse("a=example.com"));
        assertThrows(IllegalArgumentException.class, () -> ModelConfig.parse("a=127.0.0.5,a=127.0.0.6"));
        String old = System.getProperty(ModelConfig.IDLE_PROPERTY);
        try {
            assertTrue(ModelConfig.idleStrategy() instanceof io.jhca.rxe.AdaptiveIdleStrategy);
            System.setProperty(ModelConfig.IDLE_PROPERTY, "backoff");
            assertTrue(ModelConfig.idleStrategy() instanceof org.agrona.concurrent.BackoffIdleStrategy);
            System.setProperty(ModelConfig.IDLE_PROPERTY, "busy");
            assertTrue(ModelConfig.idleStrategy() instanceof org.agrona.concurrent.BusySpinIdleStrategy);
            System.setProperty(ModelConfig.IDLE_PROPERTY, "lazy");
            assertThrows(IllegalArgumentException.class, ModelConfig::idleStrategy);
        } finally {
            if (old == null) {
                System.clearProperty(ModelConfig.IDLE_PROPERTY);
            } else {
                System.setProperty(ModelConfig.IDLE_PROPERTY, old);
            }
        }
    }

    @Test
    void foundByServiceLoaderAndOpenedByName() {
        String old = System.getProperty(ModelConfig.DEVICES_PROPERTY);
        System.setProperty(ModelConfig.DEVICES_PROPERTY, "simx=127.0.0.39");
        try {
            Mlx5FunctionSource source = null;
            for (Mlx5FunctionSource s : ServiceLoader.load(Mlx5FunctionSource.class)) {
                if (s instanceof ModelFunctionSource) {
                    source = s;
                }
            }
            assertTrue(source != null, "ModelFunctionSource is not registered in META-INF/services");
            assertEquals(List.of("simx"), source.names());
            Mlx5FunctionSource src = source;
            assertThrows(IllegalArgumentException.class, () -> src.open("nope"));
            try (Mlx5Function f = source.open("simx")) {
                assertEquals("simx", f.name());
                assertEquals("sim:simx", f.location());
                assertEquals(64 * 4096, f.bar0().length());
                assertEquals(0, f.bar0().address() & 4095, "BAR0 is page aligned");
                assertEquals(List.of(InetAddress.getByName("127.0.0.39")), f.portAddresses());
            }
            // MSI-X vector 0 by default, as a ConnectX behind vfio; polled when switched off
            try (Mlx5Function f = source.open("simx")) {
                assertTrue(f.eqInterrupt() != null, "a model function has its interrupt line by default");
            }
            System.setProperty(ModelFunction.INTERRUPTS_PROPERTY, "false");
            try (Mlx5Function f = source.open("simx")) {
                assertEquals(null, f.eqInterrupt(), "interrupts switched off: the driver polls the EQ");
            } finally {
                System.clearProperty(ModelFunction.INTERRUPTS_PROPERTY);
            }
            System.setProperty(ModelConfig.DEVICES_PROPERTY, "none");
            assertTrue(source.names().isEmpty());
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            if (old == null) {
                System.clearProperty(ModelConfig.DEVICES_PROPERTY);
            } else {
                System.setProperty(ModelConfig.DEVICES_PROPERTY, old);
            }
        }
    }

    @Test
    void dmaMemoryIsExactlyWhatTheIommuMaps() throws Exception {
        Iommu iommu = new Iommu();
        try (DmaRegion r = DmaMemory.allocate(3 * 4096)) {
            assertFalse(iommu.contains(r.iova(0), 1));
            iommu.map(r);
            assertEquals(r.address(), iommu.hostAddress(r.iova(0), r.length()));
            assertEquals(r.address() + 100, iommu.hostAddress(r.iova(100), 8));
            assertEquals(-1, iommu.hostAddress(r.iova(0), r.length() + 1), "one byte past the region");
            assertEquals(-1, iommu.hostAddress(r.iova(0) - 1, 2), "one byte before it");
            assertThrows(IllegalArgumentException.class, () -> iommu.map(r), "mapped twice: overlap");
            UnsafeBuffer v = new UnsafeBuffer(0, 0);
            assertTrue(iommu.wrap(v, r.iova(8), 16));
            assertEquals(r.address() + 8, v.addressOffset());
            assertEquals(1, iommu.unmap(r).size());
            assertFalse(iommu.wrap(v, r.iova(8), 16));
        }
    }

    @Test
    void allocatedAndMappedRegionsFollowTheirLifetimes() throws Exception {
        try (ModelFunction f = ModelFunction.open("dma0", InetAddress.getByName("127.0.0.40"))) {
            Iommu iommu = iommuOf(f);
            DmaRegion a = f.allocateDma(8192);
            long iova = a.iova(0);
            assertTrue(iommu.contains(iova, 8192));
            a.close();
            assertFalse(iommu.contains(iova, 1), "closing device memory unmaps it first");
            try (DmaRegion user = DmaMemory.allocate(4096)) {
                f.mapForDevice(user);
                assertTrue(iommu.contains(user.iova(0), 4096));
                assertThrows(IllegalStateException.class, user::close, "a mapped region is retained");
                f.unmapForDevice(user);
                assertFalse(iommu.contains(user.iova(0), 1));
            }
            DmaRegion kept = f.allocateDma(4096);
            f.close();
            assertTrue(kept.isClosed(), "close frees the DMA memory it handed out");
        }
    }

    private static Iommu iommuOf(ModelFunction f) throws Exception {
        java.lang.reflect.Field fld = ModelFunction.class.getDeclaredField("iommu");
        fld.setAccessible(true);
        return (Iommu) fld.get(f);
    }

    @Test
    void cqeSyndromesReadBackAsTheStatusTheyCameFrom() {
        for (WcStatus s : WcStatus.values()) {
            if (s == WcStatus.SUCCESS) {
                continue;
            }
            WcStatus back = CqeStatus.toWcStatus(CqeErrors.syndromeOf(s));
            if (CqeErrors.syndromeOf(s) == CqeErrors.SYNDROME_GENERAL) {
                assertEquals(WcStatus.GENERAL_ERR, back, s.name());
            } else {
                assertEquals(s, back, s.name());
            }
        }
    }
}
