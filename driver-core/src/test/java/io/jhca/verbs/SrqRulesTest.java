package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.verbs.fake.FakeProviderAccess;

/** The SRQ rules driver-core enforces for every provider: creation limits, modify limits, which QPs may use one. */
class SrqRulesTest extends VerbsTestSupport {
    private static final DeviceAttributes DEV = FakeProviderAccess.attributes();
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void resources() {
        pd = track(ctx.allocatePd());
        cq = track(ctx.createCq(16));
    }

    @Test
    void creationLimitsAreTheDevicesAndTheLimitMayEqualTheDepth() {
        // ibv_create_srq(3): max_wr 1..max_srq_wr, max_sge 1..max_srq_sge, srq_limit 0..max_wr, each edge inclusive
        track(pd.createSrq(SrqInitAttributes.create().maxWr(DEV.maxSrqWr()).maxSge(DEV.maxSrqSge())));
        refused(VerbsException.EINVAL, "max_wr " + (DEV.maxSrqWr() + 1) + " out of range 1.." + DEV.maxSrqWr(),
                () -> pd.createSrq(SrqInitAttributes.create().maxWr(DEV.maxSrqWr() + 1)));
        refused(VerbsException.EINVAL, "max_sge " + (DEV.maxSrqSge() + 1) + " out of range 1.." + DEV.maxSrqSge(),
                () -> pd.createSrq(SrqInitAttributes.create().maxSge(DEV.maxSrqSge() + 1)));
        SharedReceiveQueue full = track(pd.createSrq(SrqInitAttributes.create().maxWr(8).srqLimit(8)));
        assertEquals(8, full.query().srqLimit(), "a limit of the whole depth is armed");
        refused(VerbsException.EINVAL, "srq_limit 9 out of range 0..8",
                () -> pd.createSrq(SrqInitAttributes.create().maxWr(8).srqLimit(9)));
        assertEquals(2, pd.userCount(), "only the legal SRQs were created");
    }

    @Test
    void modifyKeepsMaxWrAndTheLimitInRange() {
        // rxe_srq_chk_attr: max_wr up to max_srq_wr, a limit up to the depth (both inclusive); unknown bits refused
        SharedReceiveQueue srq = track(pd.createSrq(SrqInitAttributes.create().maxWr(8)));
        srq.modify(SrqAttributes.limit(8), SrqAttributes.LIMIT);
        assertEquals(8, srq.query().srqLimit());
        refused(VerbsException.EINVAL, "srq_limit 9 out of range 0..8", () -> srq.modify(SrqAttributes.limit(9), SrqAttributes.LIMIT));
        srq.modify(new SrqAttributes(DEV.maxSrqWr(), 0, 0), SrqAttributes.MAX_WR);
        assertEquals(DEV.maxSrqWr(), srq.query().maxWr());
        refused(VerbsException.EINVAL, "max_wr " + (DEV.maxSrqWr() + 1) + " out of range",
                () -> srq.modify(new SrqAttributes(DEV.maxSrqWr() + 1, 0, 0), SrqAttributes.MAX_WR));
        refused(VerbsException.EINVAL, "unknown attribute mask bits 0x4",
                () -> srq.modify(SrqAttributes.limit(1), SrqAttributes.LIMIT | 4));
        assertEquals(8, srq.query().srqLimit(), "a refused modify arms nothing");
    }

    @Test
    void onlyRcAndUdQpsTakeReceivesFromAnSrq() {
        // ibv_create_qp(3): a UC QP has its own receive queue; RC and UD may share an SRQ
        SharedReceiveQueue srq = track(pd.createSrq(SrqInitAttributes.create()));
        track(pd.createQp(QpInitAttributes.rc(cq, cq).srq(srq)));
        track(pd.createQp(QpInitAttributes.ud(cq, cq).srq(srq)));
        refused(VerbsException.EINVAL, "a UC QP cannot take its receives from an SRQ",
                () -> pd.createQp(QpInitAttributes.uc(cq, cq).srq(srq)));
        assertEquals(2, srq.userCount());
    }

    @Test
    void aClosedSrqIsRefusedBeforeTheProviderMakesAQp() {
        // refused up front, before the provider is asked (mlx5 would have run CREATE_QP for a QP that cannot be)
        SharedReceiveQueue srq = pd.createSrq(SrqInitAttributes.create());
        srq.close();
        int pdUsers = pd.userCount();
        int cqUsers = cq.userCount();
        FakeProviderAccess.beforeNextCreate(ctx, () -> fail("the provider was asked for a QP on a closed SRQ"));
        refused(VerbsException.EINVAL, "is closed", () -> pd.createQp(QpInitAttributes.rc(cq, cq).srq(srq)));
        FakeProviderAccess.beforeNextCreate(ctx, null);
        assertEquals(pdUsers, pd.userCount(), "no QP left behind on the PD");
        assertEquals(cqUsers, cq.userCount(), "no QP left behind on the CQ");
    }

    @Test
    void anSrqOfAnotherDeviceIsRefused() {
        // a QP takes receives only from an SRQ of its own device
        try (Context other = Verbs.open("fake0")) {
            ProtectionDomain otherPd = other.allocatePd();
            SharedReceiveQueue foreign = otherPd.createSrq(SrqInitAttributes.create());
            refused(VerbsException.EINVAL, "belongs to another device", () -> pd.createQp(QpInitAttributes.rc(cq, cq).srq(foreign)));
            assertEquals(0, foreign.userCount());
            foreign.close();
            otherPd.close();
        }
    }
}
