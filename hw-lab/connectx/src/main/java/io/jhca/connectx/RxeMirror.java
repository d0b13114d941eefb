package io.jhca.connectx;

import java.net.InetAddress;
import java.util.function.UnaryOperator;

import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.PageListRegion;
import io.jhca.rxe.RxeKeys;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;

/**
 * The model's wire: one rxe device per simulated function, bound to the port's IP (RoCEv2, UDP 4791), driven from
 * the firmware thread's duty cycle (progress mode CALLER, so one thread runs the whole model and every rxe call is made
 * from it). The firmware mirrors its objects on it through the verbs API: PD to PD, mkey to an MR under the very same
 * key, CQ to CQ, QP to QP with the same QPN; so a simulated ConnectX and any rxe device speak one RoCEv2
 * implementation.
 */
final class RxeMirror implements AutoCloseable {

    /** rxe fills GID index 1 with the device's IP address (index 0 is the link-local GID). */
    static final int PORT_GID_INDEX = 1;

    final RxeContext context;

    /**
     * {@code wire} may add to the link's configuration (fault injection, a pcap trace); progress stays CALLER, and the
     * rxe SRQs take the scatter lists of the longest ConnectX SRQ WQE (31 SGEs), beyond Linux rxe's 27.
     */
    RxeMirror(String name, InetAddress address, UnaryOperator<RxeDeviceConfig.Builder> wire) {
        this.context = RxeProvider.open(wire.apply(RxeDeviceConfig.builder(name + "-wire").address(address))
                .progressMode(ProgressMode.CALLER).maxSrqSge(ModelCaps.MAX_SGE).build());
    }

    /** One engine duty cycle: received packets, timers, sends. */
    int progress() {
        return context.progress();
    }

    /**
     * Registers a memory key under {@code key}: its addresses {@code [start, start + length)} over the host pages the
     * model resolved through its IOMMU (never anything the IOMMU did not map), so the rxe engine accepts exactly the
     * keys and addresses the driver's WQEs and its peers name, and copies page by page.
     */
    MemoryRegion register(ProtectionDomain pd, long start, long length, int pageShift, long[] hostPages, int access,
            int key) {
        PageListRegion region = new PageListRegion(start, length, pageShift, hostPages);
        return RxeKeys.register(pd, region, 0, length, access, key);
    }

    /** Registers model-private host memory (a QP's bounce buffer) under {@code key}: its addresses are host addresses. */
    MemoryRegion registerHost(ProtectionDomain pd, long host, long length, int access, int key) {
        return RxeKeys.register(pd, new HostRangeRegion(host, length), 0, length, access, key);
    }

    /** Deregisters and drops the host-range view. */
    static void deregister(MemoryRegion mr) {
        if (mr == null) {
            return;
        }
        DmaRegion region = mr.region();
        mr.close();
        if (region instanceof PageListRegion || region instanceof HostRangeRegion) {
            region.close();
        }
    }

    @Override
    public void close() {
        context.close();
    }
}
