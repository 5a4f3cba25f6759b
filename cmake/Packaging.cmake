# The Debian package: `./dev package` (cpack -G DEB in the build folder) makes
# build/trainmem_VERSION_ARCH.deb from the install rules, so what `cmake --install`
# puts in place and what the .deb carries are one list.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trainmem)
set(CPACK_PACKAGE_VENDOR "The trainmem developers")
set(CPACK_PACKAGE_CONTACT "The trainmem developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU memory calculator for training large transformer models")
set(CPACK_PACKAGE_DESCRIPTION
    "trainmem estimates how much memory each GPU needs to train a transformer, where every gigabyte goes, and whether it fits: weights, gradients, optimizer states, activations, buffers, per pipeline stage and phase of the step, for every kind of parallelism. A desktop app (trainmem) and a command line (trainmem-cli).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # trainmem_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Depends: the shared libraries the binaries link, as dpkg-shlibdeps finds them,
# plus what is loaded at run time and so invisible to it: Qt's platform plugins
# (xcb for a window, offscreen for --export) and a font for every label.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES TRUE)   # Debian ships stripped binaries; the build keeps its debug info
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-dejavu-core")
include(CPack)
