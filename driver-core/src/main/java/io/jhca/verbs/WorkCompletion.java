package io.jhca.verbs;

/**
 * A work completion ({@code struct ibv_wc}). Allocate one (or an array) up front and let
 * {@link CompletionQueue#poll} fill it: polling never allocates. The setters are for providers.
 */
public final class WorkCompletion {
    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();

    private long wrId;
    // Ordinals, not enum references: a completion object lives long (old generation), and each reference store
    // into it would cost a G1 post-write barrier on the poll path; an int store costs nothing.
    private int status;
    private int opcode;
    private int vendorErr;
    private int byteLen;
    private int immData;
    private int qpNum;
    private int srcQp;
    private int wcFlags;
    private int pkeyIndex;
    private int slid;
    private int sl;
    private int dlidPathBits;
    private boolean solicited;
    private int invalidatedRkey;
    /**
     * Which fields beyond the five every completion has may be non-zero: {@link #RARE}, one a setter wrote (vendor_err,
     * imm, an invalidated rkey, the solicited bit, the P_Key index, flags); {@link #SOURCED}, the source fields
     * (src_qp, sl, slid, wc_flags) {@link #setReceive} wrote. {@link #set} clears the ten only when one is, so a poll
     * loop of send completions skips ten stores each, and {@link #setReceive} writes its four whatever their values
     * and clears nothing after a receive: one field, one test per completion.
     */
    private int extras;
    private static final int RARE = 1;
    private static final int SOURCED = 2;

    public long wrId() {
        return wrId;
    }

    public WcStatus status() {
        return STATUSES[status];
    }

    public WcOpcode opcode() {
        return OPCODES[opcode];
    }

    public int vendorErr() {
        return vendorErr;
    }

    public int byteLen() {
        return byteLen;
    }

    /** Immediate data in host order (the 32 bits the sender gave), valid when {@link WcFlags#WITH_IMM} is set. */
    public int immData() {
        return immData;
    }

    /** The local QP number this completion belongs to. */
    public int qpNum() {
        return qpNum;
    }

    /** UD receives: the sender's QP number. */
    public int srcQp() {
        return srcQp;
    }

    public int wcFlags() {
        return wcFlags;
    }

    public int pkeyIndex() {
        return pkeyIndex;
    }

    public int slid() {
        return slid;
    }

    public int sl() {
        return sl;
    }

    public int dlidPathBits() {
        return dlidPathBits;
    }

    public boolean isSuccess() {
        return status == 0; // WcStatus.SUCCESS
    }

    /** Provider side: fill the fields every completion has and clear the rest. */
    public WorkCompletion set(long wrId, WcStatus status, WcOpcode opcode, int qpNum, int byteLen) {
        this.wrId = wrId;
        this.status = status.ordinal();
        this.opcode = opcode.ordinal();
        this.qpNum = qpNum;
        this.byteLen = byteLen;
        if (extras != 0) {
            clearExtras();
        }
        return this;
    }

    /**
     * Provider side: a successful receive (responder) completion in one call, with the source fields every receive
     * has ({@code src_qp}, {@code sl}, {@code slid}; {@code wcFlags} such as {@link WcFlags#GRH}); the others are
     * cleared. Immediate data, an invalidated rkey, the solicited bit and the P_Key index follow with their setters.
     */
    public WorkCompletion setReceive(long wrId, WcOpcode opcode, int qpNum, int byteLen, int srcQp, int sl, int slid,
                                     int wcFlags) {
        this.wrId = wrId;
        this.status = 0;   // WcStatus.SUCCESS
        this.opcode = opcode.ordinal();
        this.qpNum = qpNum;
        this.byteLen = byteLen;
        if ((extras & RARE) != 0) {
            clearExtras();
        }
        this.srcQp = srcQp;
        this.sl = sl;
        this.slid = slid;
        this.wcFlags = wcFlags;
        this.extras = SOURCED;
        return this;
    }

    private void clearExtras() {
        vendorErr = 0;
        immData = 0;
        srcQp = 0;
        wcFlags = 0;
        pkeyIndex = 0;
        slid = 0;
        sl = 0;
        dlidPathBits = 0;
        solicited = false;
        invalidatedRkey = 0;
        extras = 0;
    }

    /**
     * A receive of a message sent with {@link SendFlags#SOLICITED} (the BTH SE bit, IBTA 9.2; what
     * {@code mlx5dv_get_cqe_se} reads): what solicited-only arming waits for. Not part of {@code struct ibv_wc}.
     */
    public boolean solicited() {
        return solicited;
    }

    public WorkCompletion solicited(boolean se) {
        this.solicited = se;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion immData(int imm) {
        this.immData = imm;
        this.extras |= RARE;
        this.wcFlags |= WcFlags.WITH_IMM;
        return this;
    }

    public WorkCompletion srcQp(int qpn) {
        this.srcQp = qpn;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion wcFlags(int flags) {
        this.wcFlags |= flags;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion vendorErr(int err) {
        this.vendorErr = err;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion sl(int sl) {
        this.sl = sl;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion slid(int slid) {
        this.slid = slid;
        this.extras |= RARE;
        return this;
    }

    public WorkCompletion pkeyIndex(int index) {
        this.pkeyIndex = index;
        this.extras |= RARE;
        return this;
    }

    /**
     * The rkey a received SEND_WITH_INV invalidated ({@code ibv_wc.invalidated_rkey}), valid when
     * {@link WcFlags#WITH_INV} is set.
     */
    public int invalidatedRkey() {
        return invalidatedRkey;
    }

    /** Provider side: the received message invalidated {@code rkey}; sets {@link WcFlags#WITH_INV}. */
    public WorkCompletion invalidatedRkey(int rkey) {
        this.invalidatedRkey = rkey;
        this.extras |= RARE;
        this.wcFlags |= WcFlags.WITH_INV;
        return this;
    }

    /** Copies every field of another completion. */
    public WorkCompletion copyFrom(WorkCompletion o) {
        wrId = o.wrId;
        status = o.status;
        opcode = o.opcode;
        vendorErr = o.vendorErr;
        byteLen = o.byteLen;
        immData = o.immData;
        qpNum = o.qpNum;
        srcQp = o.srcQp;
        wcFlags = o.wcFlags;
        pkeyIndex = o.pkeyIndex;
        slid = o.slid;
        sl = o.sl;
        dlidPathBits = o.dlidPathBits;
        solicited = o.solicited;
        invalidatedRkey = o.invalidatedRkey;
        extras = o.extras;
        return this;
    }

    @Override
    public String toString() {
        return "wc{wr_id=" + wrId + ", status=" + status() + ", opcode=" + opcode() + ", byte_len=" + byteLen
                + ", qp_num=0x" + Integer.toHexString(qpNum) + ((wcFlags & WcFlags.WITH_IMM) != 0
                ? ", imm=0x" + Integer.toHexString(immData) : "") + ((wcFlags & WcFlags.WITH_INV) != 0
                ? ", invalidated_rkey=0x" + Integer.toHexString(invalidatedRkey) : "") + (srcQp != 0 ? ", src_qp=0x" + Integer.toHexString(srcQp) : "")
                + (vendorErr != 0 ? ", vendor_err=0x" + Integer.toHexString(vendorErr) : "") + "}";
    }
}
