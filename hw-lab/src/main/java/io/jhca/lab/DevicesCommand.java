package io.jhca.lab;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;

/** ibv_devices: the name and node GUID of every device of every provider (libibverbs/examples/device_list.c). */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = "List devices and their node GUIDs, as ibv_devices does.")
public final class DevicesCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        print(Verbs.devices(), spec.commandLine().getOut());
    }

    static void print(List<DeviceInfo> devices, PrintWriter out) {
        out.printf("    %-16s\t   node GUID%n", "device");
        out.printf("    %-16s\t----------------%n", "------");
        for (DeviceInfo d : devices) {
            out.printf("    %-16s\t%016x%n", d.name(), d.nodeGuid());
        }
        out.flush();
    }
}
