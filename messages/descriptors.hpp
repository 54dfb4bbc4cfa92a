#pragma once
// Builds the descriptors and reflection metadata of every generated message, once, before the
// process starts threads.
//
// libprotobuf builds a .proto file's descriptors lazily, on the first GetDescriptor() or
// descriptor() call for one of its messages, through the shared generated pool
// (DescriptorPool::FindFileByName). Our reflectors, informers and the API cluster's differencer
// make those first calls from several threads at once; a ThreadSanitizer run of `run` with the
// storage informers reported a data race inside FindFileByName there (CI, issue #14's volumes
// case), in libprotobuf, which the sanitizer builds do not instrument. Building everything up
// front leaves later calls only reads of finished tables, whatever the library's locking.
namespace kas::codec {

void build_all_descriptors();

}  // namespace kas::codec
