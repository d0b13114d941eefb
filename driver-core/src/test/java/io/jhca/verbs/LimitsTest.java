package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Device limits and argument ranges are enforced in driver-core, with the limit named in the message. */
class LimitsTest extends VerbsTestSupport {
    private static final DeviceAttributes DEV = io.jhca.verbs.fake.FakeProviderAccess.attributes();

    @Test
    void cqSizeMustBeWithinOneAndMaxCqe() {
        track(ctx.createCq(1));
        track(ctx.createCq(DEV.maxCqe()));
        refused(VerbsException.EINVAL, "out of range 1.." + DEV.maxCqe(), () -> ctx.createCq(0));
        refused(VerbsException.EINVAL, "out of range", () -> ctx.createCq(DEV.maxCqe() + 1));
    }

    @Test
    void qpCapabilitiesAboveTheDeviceAreRefusedByName() {
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        track(pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(DEV.maxQpWr()).maxRecvWr(DEV.maxQpWr())
                .maxSendSge(DEV.maxSge()).maxRecvSge(DEV.maxSge()).maxInlineData(DEV.maxInlineData())));
        refused(VerbsException.EINVAL, "max_send_wr", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(DEV.maxQpWr() + 1)));
        refused(VerbsException.EINVAL, "max_recv_wr", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxRecvWr(DEV.maxQpWr() + 1)));
        refused(VerbsException.EINVAL, "max_send_sge", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxSendSge(DEV.maxSge() + 1)));
        refused(VerbsException.EINVAL, "max_recv_sge", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxRecvSge(DEV.maxSge() + 1)));
        refused(VerbsException.EINVAL, "max_inline_data", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxInlineData(DEV.maxInlineData() + 1)));
        refused(VerbsException.EINVAL, "negative", () -> pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(-1)));
        assertEquals(1, pd.userCount(), "only the legal QP was created");
    }

    @Test
    void registrationChecksAccessAndBounds() {
        ProtectionDomain pd = track(ctx.allocatePd());
        DmaRegion mem = memory(8192);
        refused(VerbsException.EINVAL, "require LOCAL_WRITE", () -> pd.register(mem, Access.REMOTE_WRITE));
        refused(VerbsException.EINVAL, "require LOCAL_WRITE", () -> pd.register(mem, Access.REMOTE_ATOMIC));
        refused(VerbsException.EINVAL, "outside the region", () -> pd.register(mem, 4096, 4097, Access.mask(Access.LOCAL_WRITE)));
        refused(VerbsException.EINVAL, "outside the region", () -> pd.register(mem, -1, 10, 0));
        refused(VerbsException.EINVAL, "outside the region", () -> pd.register(mem, Long.MAX_VALUE, 10, 0));
        refused(VerbsException.EINVAL, "unknown access bits", () -> pd.register(mem, 0, 10, 0x100));
        MemoryRegion mr = track(pd.register(mem, 4096, 4096, Access.mask(Access.LOCAL_WRITE, Access.REMOTE_READ)));
        assertEquals(mem.address() + 4096, mr.address());
        assertEquals(Access.mask(Access.LOCAL_WRITE, Access.REMOTE_READ), mr.access());
        org.junit.jupiter.api.Assertions.assertTrue(mr.contains(mr.address(), 4096));
        org.junit.jupiter.api.Assertions.assertFalse(mr.contains(mr.address() + 1, 4096));
        org.junit.jupiter.api.Assertions.assertFalse(mr.contains(mr.address() - 1, 1));
        org.junit.jupiter.api.Assertions.assertFalse(mr.contains(Long.MAX_VALUE, Long.MAX_VALUE));
    }

    @Test
    void modifyRangesAreCheckedAndTheQpIsUnchangedOnRefusal() {
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        refused(VerbsException.EINVAL, "port 2 out of range", () -> qp.modify(QpAttributes.toInit(2)));
        refused(VerbsException.EINVAL, "pkey_index 1", () -> qp.modify(QpAttributes.toInit(1).pkeyIndex(1)));
        assertEquals(QpState.RESET, qp.state());
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_READ));
        AhAttributes av = AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1);
        refused(VerbsException.EINVAL, "rq_psn 16777216", () -> qp.modify(QpAttributes.toRtr(0x12, 1 << 24, av, Mtu.MTU_1024)));
        refused(VerbsException.EINVAL, "dest_qp_num", () -> qp.modify(QpAttributes.toRtr(-1, 0, av, Mtu.MTU_1024)));
        refused(VerbsException.EINVAL, "sgid_index 2", () -> qp.modify(QpAttributes.toRtr(0x12, 0, av.copy().sgidIndex(2), Mtu.MTU_1024)));
        refused(VerbsException.EINVAL, "GID index 0 is empty", () -> qp.modify(QpAttributes.toRtr(0x12, 0, av.copy().sgidIndex(0), Mtu.MTU_1024)));
        refused(VerbsException.EINVAL, "no destination GID", () -> qp.modify(QpAttributes.toRtr(0x12, 0, AhAttributes.to(Gid.ZERO).sgidIndex(1), Mtu.MTU_1024)));
        refused(VerbsException.EINVAL, "max_dest_rd_atomic", () -> qp.modify(QpAttributes.toRtr(0x12, 0, av, Mtu.MTU_1024).maxDestRdAtomic(DEV.maxQpRdAtom() + 1)));
        refused(VerbsException.EINVAL, "missing required attribute", () -> qp.modify(QpAttributes.toRtr(0x12, 0, av, Mtu.MTU_1024).without(QpAttrMask.AV)));
        assertEquals(QpState.INIT, qp.state());
        qp.modify(QpAttributes.toRtr(0x12, 0xabcdef, av, Mtu.MTU_2048));
        refused(VerbsException.EINVAL, "timeout 32", () -> qp.modify(QpAttributes.toRts(0).timeout(32)));
        refused(VerbsException.EINVAL, "retry_cnt 8", () -> qp.modify(QpAttributes.toRts(0).retryCnt(8)));
        refused(VerbsException.EINVAL, "rnr_retry 8", () -> qp.modify(QpAttributes.toRts(0).rnrRetry(8)));
        refused(VerbsException.EINVAL, "illegal transition", () -> qp.modify(QpAttributes.toState(QpState.SQD)));
        qp.modify(QpAttributes.toRts(0x123456));
        QpAttributes q = qp.query();
        assertEquals(QpState.RTS, q.state());
        assertEquals(0xabcdef, q.rqPsn());
        assertEquals(0x123456, q.sqPsn());
        assertEquals(Mtu.MTU_2048, q.pathMtu());
        assertEquals(0x12, q.destQpn());
        assertEquals(Access.mask(Access.REMOTE_READ), q.accessFlags());
        assertEquals(3, ((io.jhca.verbs.fake.FakeQp) qp).modifies, "refused modifies never reach the provider");
    }

    @Test
    void pathMtuAboveThePortMaximumIsRefused() {
        // The fake port's max MTU is 4096, so every enum value is legal; an unknown enum value is refused at parse.
        assertThrows(VerbsException.class, () -> Mtu.of(6));
        assertThrows(VerbsException.class, () -> Mtu.ofBytes(1500));
        assertEquals(Mtu.MTU_1024, Mtu.largestNotAbove(1500 - 80));
    }

    @Test
    void unknownDeviceNamesTheDevicesThatExist() {
        refused(VerbsException.ENOENT, "fake0", () -> Verbs.open("nope0"));
    }

    @Test
    void aDeviceWithoutAGsiQpRefusesQp1() {
        // the fake device has no GSI QP: EOPNOTSUPP before the provider is asked, and nothing is created
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        refused(VerbsException.EOPNOTSUPP, "has no GSI QP (QP1)", () -> pd.createQp(QpInitAttributes.gsi(cq, cq)));
        assertEquals(0, pd.userCount());
    }

    @Test
    void modifyRefusesUnknownAccessBitsAndANullAddressVector() {
        // Access.ALL is the last legal QP access mask; an AV bit needs an AV (EINVAL, not a NullPointerException)
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        refused(VerbsException.EINVAL, "unknown access bits 0x3f", () -> qp.modify(QpAttributes.toInit(1).accessFlags(Access.ALL | 0x20)));
        qp.modify(QpAttributes.toInit(1).accessFlags(Access.ALL));
        refused(VerbsException.EINVAL, "AV bit set without an address vector",
                () -> qp.modify(QpAttributes.toRtr(0x12, 0, null, Mtu.MTU_1024)));
        assertEquals(QpState.INIT, qp.state());
    }

    @Test
    void thePortsMaxMtuIsALegalPathMtu() {
        // path_mtu may equal the port's max_mtu (4096 on the fake port), only above it is refused
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        assertEquals(Mtu.MTU_4096, ctx.queryPort(1).maxMtu());
        qp.modify(QpAttributes.toInit(1));
        qp.modify(QpAttributes.toRtr(0x12, 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_4096));
        assertEquals(Mtu.MTU_4096, qp.query().pathMtu());
    }

    @Test
    void aNegativeRegistrationLengthIsRefused() {
        // offset > region length - length alone lets a negative length through: it is refused by itself
        ProtectionDomain pd = track(ctx.allocatePd());
        DmaRegion mem = memory(8192);
        refused(VerbsException.EINVAL, "outside the region", () -> pd.register(mem, 0, -1, 0));
        refused(VerbsException.EINVAL, "outside the region", () -> pd.register(mem, 4096, -4096, 0));
        track(pd.register(mem, 8192, 0, 0));
        assertEquals(1, pd.userCount(), "only the empty MR at the region's end was registered");
    }

    @Test
    void gidIndicesEndBeforeTheTableLength() {
        // ibv_query_gid(3): index 0..gid_tbl_len-1
        int n = ctx.queryPort(1).gidTblLen();
        ctx.queryGid(1, n - 1);
        refused(VerbsException.EINVAL, "GID index " + n + " out of range 0.." + (n - 1), () -> ctx.queryGid(1, n));
    }
}
