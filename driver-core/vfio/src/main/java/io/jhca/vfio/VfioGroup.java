package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.jhca.pci.PciAddress;

/**
 * A VFIO group ({@code /dev/vfio/<N>}): the set of functions the IOMMU cannot tell apart. It must be viable
 * (every function in it bound to vfio-pci or to no driver) before it may join a container, and devices are
 * opened through it by PCI address. Created by {@link VfioContainer#openGroup(int)}; closing it closes its
 * devices, detaches it from the container and closes the fd.
 */
public final class VfioGroup extends VfioHandle {

    private final VfioContainer container;
    private boolean attached;
    private final List<VfioDevice> devices = new ArrayList<>();

    private VfioGroup(final VfioContainer container, final Syscalls sys, final String name, final int fd) {
        super(sys, name, fd, "group");
        this.container = container;
    }

    static VfioGroup open(final VfioContainer container, final Syscalls sys, final Path path, final String name) {
        final int fd = sys.open(path.toString(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            final int errno = sys.errno();
            throw new VfioException(name, "open " + path, errno, errno == Errno.ENOENT
                ? "no such group: bind every function of the group to vfio-pci first (hwlab pci bind BDF vfio-pci)"
                : errno == Errno.EACCES || errno == Errno.EPERM ? "run as root or give this user access to " + path
                : errno == Errno.EBUSY ? "another process has the group open" : null);
        }
        final VfioGroup g = new VfioGroup(container, sys, name, fd);
        try {
            final int flags = g.status();
            if ((flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
                throw VfioException.refused(name, "VFIO_GROUP_GET_STATUS", "the group is not viable: every function in"
                    + " it must be bound to vfio-pci or to no driver (hwlab pci list shows the group's functions)");
            }
            final NativeStruct containerFd = new NativeStruct(4);
            containerFd.buffer.putInt(0, container.fd());
            if (sys.ioctl(fd, VFIO_GROUP_SET_CONTAINER, containerFd.address()) < 0) {
                throw new VfioException(name, "VFIO_GROUP_SET_CONTAINER", sys.errno(), null);
            }
            containerFd.keepAlive();
            g.attached = true;
            container.attached(g);
            return g;
        } catch (final RuntimeException | Error e) {
            final RuntimeException failure = g.closeFd(g.detach(null));
            if (failure != null) {
                throw failure;
            }
            throw e;
        }
    }

    /** VFIO_GROUP_GET_STATUS flags ({@link VfioAbi#VFIO_GROUP_FLAGS_VIABLE}, {@link VfioAbi#VFIO_GROUP_FLAGS_CONTAINER_SET}). */
    public synchronized int status() {
        ensureOpen("VFIO_GROUP_GET_STATUS");
        final NativeStruct s = NativeStruct.withArgsz(GROUP_STATUS_SIZE);
        if (sys.ioctl(fd, VFIO_GROUP_GET_STATUS, s.address()) < 0) {
            throw new VfioException(name, "VFIO_GROUP_GET_STATUS", sys.errno(), null);
        }
        s.keepAlive();
        return s.buffer.getInt(GROUP_STATUS_FLAGS);
    }

    /** Whether every function in the group is bound to vfio-pci or to no driver. */
    public boolean viable() {
        return (status() & VFIO_GROUP_FLAGS_VIABLE) != 0;
    }

    /** VFIO_GROUP_GET_DEVICE_FD by PCI address, then VFIO_DEVICE_GET_INFO. */
    public synchronized VfioDevice openDevice(final PciAddress address) {
        ensureOpen("VFIO_GROUP_GET_DEVICE_FD");
        final String bdf = address.toString();
        final NativeStruct arg = NativeStruct.cString(bdf);
        final int dfd = sys.ioctl(fd, VFIO_GROUP_GET_DEVICE_FD, arg.address());
        arg.keepAlive();
        if (dfd < 0) {
            final int errno = sys.errno();
            throw new VfioException(bdf, "VFIO_GROUP_GET_DEVICE_FD", errno, errno == Errno.EBUSY
                ? "the device is already open (by this or another process)"
                : errno == Errno.EINVAL || errno == Errno.ENODEV ? "the function is not in " + name : null);
        }
        final VfioDevice d = VfioDevice.open(this, sys, bdf, dfd);
        devices.add(d);
        return d;
    }

    /** The group's name for messages: "group 12" (or "group noiommu-0"). */
    public String name() {
        return name;
    }

    /** The group fd. */
    public synchronized int fd() {
        ensureOpen("fd");
        return fd;
    }

    /** The container this group is attached to. */
    public VfioContainer container() {
        return container;
    }

    synchronized void deviceClosed(final VfioDevice device) {
        devices.remove(device);
    }

    synchronized void closeDevices() {
        RuntimeException failure = null;
        for (final VfioDevice d : new ArrayList<>(devices)) {
            failure = Cleanup.run(failure, d::close);
        }
        devices.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Closes the group's devices and detaches it from the container (VFIO_GROUP_UNSET_CONTAINER); then the fd closes. */
    @Override
    RuntimeException releaseResources(final RuntimeException failure) {
        return detach(Cleanup.run(failure, this::closeDevices));
    }

    /** The container hears of the close only when it succeeded. */
    @Override
    void afterClose(final RuntimeException failure) {
        if (failure == null) {
            container.groupClosed(this);
        }
    }

    private synchronized RuntimeException detach(RuntimeException failure) {
        if (attached) {
            attached = false;
            failure = Cleanup.run(failure, () -> {
                if (sys.ioctl(fd, VFIO_GROUP_UNSET_CONTAINER, 0) < 0) {
                    throw new VfioException(name, "VFIO_GROUP_UNSET_CONTAINER", sys.errno(), null);
                }
            });
        }
        return failure;
    }

    @Override
    public String toString() {
        return "VfioGroup[" + name + (closed ? ", closed" : ", fd " + fd + ", " + devices.size() + " devices") + "]";
    }
}
