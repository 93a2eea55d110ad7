from fs_compat.demo import main

main()
