package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;
import io.jhca.verbs.spi.Provider;

/** Configuration, discovery, and what a device reports (rxe_param.h values, identity from the IP). */
class ProviderAndDeviceTest {

    @Test
    void foundByServiceLoader() {
        boolean found = false;
        for (final Provider p : Verbs.providers()) {
            found |= p instanceof RxeProvider && p.name().equals("rxe");
        }
        assertTrue(found, "META-INF/services lists RxeProvider");
    }

    @Test
    void devicesFromConfiguration() throws Exception {
        final String old = System.getProperty(RxeDeviceConfig.DEVICES_PROPERTY);
        try {
            System.clearProperty(RxeDeviceConfig.DEVICES_PROPERTY);
            if (System.getenv(RxeDeviceConfig.DEVICES_ENV) == null) {
                final List<RxeDeviceConfig> d = RxeDeviceConfig.fromEnvironment();
                assertEquals(2, d.size());
                assertEquals("rxe0", d.get(0).name());
                assertEquals(InetAddress.getByName("127.0.0.1"), d.get(0).address());
                assertEquals("rxe1", d.get(1).name());
                assertEquals(InetAddress.getByName("127.0.0.2"), d.get(1).address());
            }
            System.setProperty(RxeDeviceConfig.DEVICES_PROPERTY, "x0=127.0.0.9, x6=::1 ,xl=if:lo");
            final List<RxeDeviceConfig> d = RxeDeviceConfig.fromEnvironment();
            assertEquals(List.of("x0", "x6", "xl"), d.stream().map(RxeDeviceConfig::name).toList());
            assertEquals(InetAddress.getByName("127.0.0.9"), d.get(0).address());
            assertEquals(InetAddress.getByName("::1"), d.get(1).address());
            assertEquals(InetAddress.getByName("127.0.0.1"), d.get(2).address(), "lo's IPv4 address");
            assertEquals(65536, d.get(2).netdevMtu(), "lo's MTU");
            assertEquals(List.of("x0", "x6", "xl"), new RxeProvider().devices().stream().map(i -> i.name()).toList());
            assertEquals("rxe", new RxeProvider().devices().get(0).provider());
        } finally {
            if (old == null) {
                System.clearProperty(RxeDeviceConfig.DEVICES_PROPERTY);
            } else {
                System.setProperty(RxeDeviceConfig.DEVICES_PROPERTY, old);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.parse("nope"));
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.parse("a=localhost"), "literals only, no DNS");
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.parse("a=if:no-such-interface-here"));
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.builder("a").address("127.0.0.1").idleStrategy("nap"));
    }

    @Test
    void attributesLikeLinuxRxe() throws Exception {
        final String ip = Rig.nextAddress();
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("attr").address(ip).build())) {
            final DeviceAttributes d = ctx.queryDevice();
            assertEquals(0xFFFFFF, d.vendorId());
            assertEquals(1 << 20, d.maxQpWr());
            assertEquals(32, d.maxSge());
            assertEquals(32767, d.maxCqe());
            assertEquals(128, d.maxQpRdAtom());
            assertEquals(128, d.maxQpInitRdAtom());
            assertEquals(400, d.maxInlineData());
            assertEquals(27, d.maxSrqSge(), "RXE_MAX_SRQ_SGE");
            assertEquals(Long.MAX_VALUE, d.maxMrSize());
            assertEquals(1, d.physPortCnt());
            assertEquals(DeviceAttributes.ATOMIC_HCA, d.atomicCap());
            final PortAttributes p = ctx.queryPort(1);
            assertEquals(PortState.ACTIVE, p.state());
            assertEquals(LinkLayer.ETHERNET, p.linkLayer());
            assertEquals(Mtu.MTU_4096, p.maxMtu());
            assertEquals(Mtu.MTU_4096, p.activeMtu(), "loopback (MTU 65536): 4096");
            assertEquals(1024, p.gidTblLen());
            // identity: MAC 02:00:<ip>, GUID = its EUI-64, GID 0 = fe80::EUI-64, GID 1 = ::ffff:<ip>
            final byte[] a = InetAddress.getByName(ip).getAddress();
            final long guid = 0x00007FFFFE000000L | (a[1] & 0xFFL) << 16 | (a[2] & 0xFFL) << 8 | (a[3] & 0xFFL);
            assertEquals(0x7F, a[0]);
            assertEquals(guid, d.nodeGuid());
            assertEquals(guid, ctx.device().nodeGuid());
            assertEquals(Gid.parse(String.format("fe80000000000000%016x", guid)), ctx.queryGid(1, 0));
            assertEquals(Gid.of(InetAddress.getByName(ip)), ctx.queryGid(1, 1));
            assertTrue(ctx.queryGid(1, 1).isIpv4Mapped());
            assertTrue(ctx.queryGid(1, 2).isZero());
        }
    }

    @Test
    void maxSrqSgeIsLinuxRxesUnlessSetWithinTheSgeLimit() {
        // a device backing a ConnectX model's SRQs takes their 31 SGEs; 1..32 (RXE_MAX_SGE) is what a WQE can hold
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("srqsge").address(Rig.nextAddress())
                .maxSrqSge(32).build())) {
            assertEquals(32, ctx.queryDevice().maxSrqSge());
            final ProtectionDomain pd = ctx.allocatePd();
            final SharedReceiveQueue srq = pd.createSrq(SrqInitAttributes.create().maxWr(4).maxSge(32));
            assertEquals(32, srq.query().maxSge());
            assertThrows(VerbsException.class, () -> pd.createSrq(SrqInitAttributes.create().maxWr(4).maxSge(33)));
            srq.close();
            pd.close();
        }
        final RxeDeviceConfig.Builder b = RxeDeviceConfig.builder("srqsge").address("127.0.0.1");
        assertEquals(1, b.maxSrqSge(1).build().maxSrqSge());
        assertThrows(IllegalArgumentException.class, () -> b.maxSrqSge(0));
        assertThrows(IllegalArgumentException.class, () -> b.maxSrqSge(33));
        assertEquals(27, RxeDeviceConfig.builder("d").address("127.0.0.1").build().maxSrqSge(), "the default");
        assertEquals(32, b.maxSrqSge(32).build().twin("t", b.build().address()).maxSrqSge(), "a twin keeps it");
    }

    @Test
    void activeMtuFromTheNetdevMtu() {
        // rxe_param.h eth_mtu_int_to_enum: largest IB MTU <= netdev MTU - 80
        assertEquals(Mtu.MTU_1024, RxeDeviceAttributes.activeMtu(1500));
        assertEquals(Mtu.MTU_4096, RxeDeviceAttributes.activeMtu(9000));
        assertEquals(Mtu.MTU_2048, RxeDeviceAttributes.activeMtu(4175));
        assertEquals(Mtu.MTU_4096, RxeDeviceAttributes.activeMtu(4176));
        assertEquals(Mtu.MTU_4096, RxeDeviceAttributes.activeMtu(65536));
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("mtu").address(Rig.nextAddress()).netdevMtu(1500).build())) {
            assertEquals(Mtu.MTU_1024, ctx.queryPort(1).activeMtu());
        }
    }

    @Test
    void qpNumbersKeysAndStaleKeys() {
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024)) {
            assertEquals(0x11, r.qpA.qpn(), "rxe hands out QPNs from 0x11");
            assertEquals(r.mrA.lkey(), r.mrA.rkey(), "remote access: rkey = lkey (rxe)");
            try (DmaRegion m = DmaMemory.allocate(DmaOptions.of(4096).lock(false))) {
                final MemoryRegion local = r.pdA.register(m, 0, 4096, Access.LOCAL_WRITE.bit());
                assertEquals(0, local.rkey(), "no remote access: rkey 0");
                final int stale = local.lkey();
                local.close();
                final MemoryRegion again = r.pdA.register(m, 0, 4096, Access.LOCAL_WRITE.bit());
                assertEquals(stale >>> 8, again.lkey() >>> 8, "the index is reused");
                assertNotEquals(stale, again.lkey(), "with another tag");
                final SendWr wr = new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
                wr.numSge(1).sge(0).set(m.address(), 16, stale);
                r.qpA.postSend(wr);
                r.expect(r.cqA, 1, WcStatus.LOC_PROT_ERR);
                again.close();
            }
        }
    }

    @Test
    void sendQueueCapacityIsAtLeastWhatWasAsked() {
        try (RxeContext ctx = RxeProvider.open(RxeDeviceConfig.builder("cap").address(Rig.nextAddress()).build());
             ProtectionDomain pd = ctx.allocatePd(); CompletionQueue cq = ctx.createCq(100);
             QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(100).maxRecvWr(3).maxInlineData(64))) {
            assertTrue(cq.capacity() >= 100);
            assertEquals(128, qp.capabilities().maxSendWr());
            assertEquals(4, qp.capabilities().maxRecvWr());
            assertEquals(64, qp.capabilities().maxInlineData());
        }
    }
}
