package io.jhca.verbs;

/**
 * The state of a memory window as the device keeps it (IBTA 10.6.7.1; rxe_mw.c {@code enum rxe_mw_state}).
 * Provider side: what {@link MwRules} checks a bind and an invalidation against.
 */
public enum MwState {
    /** Type 1 after allocation, any window after a bind: its rkey may be usable. */
    VALID,
    /** Type 2 after allocation or invalidation: bindable, its rkey grants nothing. */
    FREE,
    /** Deallocated. */
    INVALID
}
