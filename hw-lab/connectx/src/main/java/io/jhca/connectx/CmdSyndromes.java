package io.jhca.connectx;

/**
 * The 32-bit syndromes the model's firmware returns with a failed command. Real firmware syndromes are opaque,
 * undocumented numbers identifying the failing check (mlx5_core prints them in hex next to cmd.c's status text);
 * these are the model's own, one per check, so a test or a trace names exactly which rule a command broke. The
 * top byte 0x5d marks them as simulated.
 */
public final class CmdSyndromes {

    // ---- generic
    public static final int UNKNOWN_OPCODE = 0x5d000001;
    public static final int INPUT_TOO_SHORT = 0x5d000002;
    public static final int OUTPUT_TOO_SHORT = 0x5d000003;
    public static final int NOT_ENABLED = 0x5d000004;
    public static final int NOT_INITIALIZED = 0x5d000005;
    public static final int ALREADY_INITIALIZED = 0x5d000006;
    public static final int BAD_OP_MOD = 0x5d000007;
    public static final int BAD_FUNCTION_ID = 0x5d000008;
    public static final int UNSUPPORTED_OPCODE = 0x5d000009;
    public static final int ALREADY_ENABLED = 0x5d00000a;
    public static final int MODEL_FAILURE = 0x5d00000b;

    // ---- ISSI, pages, caps, teardown
    public static final int BAD_ISSI = 0x5d000101;
    public static final int PAGES_MISSING = 0x5d000102;
    public static final int PAGE_MISALIGNED = 0x5d000103;
    public static final int PAGE_NOT_MAPPED = 0x5d000104;
    public static final int PAGE_COUNT = 0x5d000105;
    public static final int PAGE_GIVEN_TWICE = 0x5d000106;
    public static final int BAD_CAP_TYPE = 0x5d000107;
    public static final int BAD_TEARDOWN_PROFILE = 0x5d000108;
    public static final int BAD_REGISTER = 0x5d000109;

    // ---- buffers
    public static final int BAD_LOG_PAGE_SIZE = 0x5d000201;
    public static final int BAD_QUEUE_SIZE = 0x5d000202;
    public static final int PAS_TOO_SHORT = 0x5d000203;
    public static final int PAS_MISALIGNED = 0x5d000204;
    public static final int PAS_NOT_MAPPED = 0x5d000205;
    public static final int DBR_NOT_MAPPED = 0x5d000206;
    public static final int PAGE_OFFSET_UNSUPPORTED = 0x5d000207;
    public static final int UMEM_UNSUPPORTED = 0x5d000208;

    // ---- objects
    public static final int UAR_EXHAUSTED = 0x5d000301;
    public static final int BAD_UAR = 0x5d000302;
    public static final int BAD_PD = 0x5d000303;
    public static final int BAD_EQN = 0x5d000304;
    public static final int BAD_CQN = 0x5d000305;
    public static final int BAD_QPN = 0x5d000306;
    public static final int BAD_MKEY = 0x5d000307;
    public static final int OBJECT_IN_USE = 0x5d000308;
    public static final int TABLE_FULL = 0x5d000309;
    public static final int EQ_SIZE = 0x5d00030a;
    public static final int CQ_SIZE = 0x5d00030b;
    public static final int CQE_SIZE = 0x5d00030c;
    public static final int CQ_FEATURE_UNSUPPORTED = 0x5d00030d;
    public static final int BAD_Q_COUNTER = 0x5d00030e;

    // ---- memory keys
    public static final int MKEY_ACCESS_MODE = 0x5d000401;
    public static final int MKEY_FREE_UNSUPPORTED = 0x5d000402;
    public static final int MKEY_LENGTH = 0x5d000403;
    public static final int MKEY_MTT_SHORT = 0x5d000404;
    public static final int MKEY_MTT_MISALIGNED = 0x5d000405;
    public static final int MKEY_MTT_NOT_MAPPED = 0x5d000406;
    public static final int MKEY_NOT_CONTIGUOUS = 0x5d000407;
    public static final int MKEY_PAGE_SIZE = 0x5d000408;

    // ---- queue pairs
    public static final int QP_TYPE = 0x5d000501;
    public static final int QP_SQ_SIZE = 0x5d000502;
    public static final int QP_RQ_SIZE = 0x5d000503;
    public static final int QP_RQ_TYPE = 0x5d000504;
    public static final int QP_BAD_STATE = 0x5d000505;
    public static final int QP_BAD_MTU = 0x5d000506;
    public static final int QP_BAD_PATH = 0x5d000507;
    public static final int QP_BAD_GID_INDEX = 0x5d000508;
    public static final int QP_BAD_RD_ATOMIC = 0x5d000509;
    public static final int QP_ATTRIBUTES = 0x5d00050a;
    public static final int QP_BAD_PORT = 0x5d00050b;
    public static final int BAD_SRQN = 0x5d00050c;
    public static final int SRQ_SIZE = 0x5d00050d;
    public static final int SRQ_BAD_LWM = 0x5d00050e;

    // ---- RoCE address table
    public static final int GID_INDEX = 0x5d000601;
    public static final int GID_VERSION = 0x5d000602;
    public static final int GID_L3_TYPE = 0x5d000603;

    // ---- multicast groups
    public static final int MCG_BAD_GID = 0x5d000701;
    public static final int MCG_NOT_ATTACHED = 0x5d000702;

    private CmdSyndromes() {
    }
}
