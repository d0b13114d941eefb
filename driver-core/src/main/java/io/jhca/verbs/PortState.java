package io.jhca.verbs;

/** Port states with the values of {@code enum ibv_port_state}. */
public enum PortState {
    NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER;

    public int value() {
        return ordinal();
    }

    /** ibv_devinfo's spelling, e.g. "PORT_ACTIVE". */
    public String label() {
        return "PORT_" + name();
    }
}
