#!/bin/sh
# gen-calls.sh fortran|large|persist TABLE > FILE -- the drop-in's entry
# points beyond C's int forms, generated from one table of signatures
# (calls.tab):
#   fortran  the Fortran bindings' entry points (fortran.c): each converts
#            Fortran's arguments (handles, sentinels, LOGICALs, 1-based
#            indices, statuses) and calls the drop-in's own C function,
#            under every name a binding may call it by (fortran_rt.h);
#   large    MPI-4's large-count forms (large.c): MPI_<Name>_c becomes the
#            int form with the same signature (large_rt.c), so a rank
#            calling MPI_Bcast_c meets one calling MPI_Bcast;
#   persist  MPI-4's persistent collectives (persist.c): MPI_<Coll>_init
#            (Open MPI 4.1: MPIX_<Coll>_init) runs the non-blocking form's
#            body with the persistent flag set (VCMPI_PERSIST);
#   blocking the C entry points of the table's section "%blocking"
#            (blocking.c): MPI's own call, run under VCMPI_BLOCKING so that
#            vcoll's requests move while it blocks.
# Every non-blocking collective of the table (i<name>, MPI_I<Name>, ending
# in req) has its persistent form <name>_init derived here: the same
# arguments, then info and req. Its C name is VCMPI_PINIT(<Name>), which
# vcmpi.h spells as this MPI does.
set -eu
mode=$1
awk '{ print }
!/^#/ && NF > 3 && $1 ~ /^i/ && $2 ~ /^MPI_I/ && $NF == "req" {
    c = substr($2, 6)
    line = substr($1, 2) "_init VCMPI_PINIT(" toupper(substr(c, 1, 1)) substr(c, 2) ")"
    for (i = 3; i < NF; i++) line = line " " $i
    print line " info req"
}' "$2" | awk -v mode="$mode" '
function line(s) { body = body s "\n" }
# the C parameter of kind k named a in the int form, "" for a kind the C
# forms do not take
function cparam(k, a) {
    if (k == "sbuf") return "const void *" a
    if (k == "rbuf") return "void *" a
    if (k == "int" || k == "count") return "int " a
    if (k ~ /^(ints|counts|displs|rcounts|rdispls|ncounts|ndispls)$/) return "const int " a "[]"
    if (k == "type") return "MPI_Datatype " a
    if (k == "op") return "MPI_Op " a
    if (k == "comm") return "MPI_Comm " a
    if (k == "info") return "MPI_Info " a
    if (k == "req") return "MPI_Request *" a
    if (k == "aint") return "MPI_Aint " a
    if (k == "win") return "MPI_Win " a
    if (k == "baseptr") return "void *" a
    if (k == "group") return "MPI_Group " a
    if (k == "newcomm") return "MPI_Comm *" a
    if (k == "newwin" || k == "winio") return "MPI_Win *" a
    if (k == "status") return "MPI_Status *" a
    if (k == "msgio") return "MPI_Message *" a
    if (k == "file") return "MPI_File " a
    if (k == "fileio" || k == "newfile") return "MPI_File *" a
    if (k == "offset") return "MPI_Offset " a
    if (k == "str") return "const char *" a
    if (k == "strs" || k == "argv") return "char *" a "[]"
    if (k == "argvs") return "char **" a "[]"
    if (k == "infos") return "const MPI_Info " a "[]"
    if (k == "intout") return "int *" a
    if (k == "flagin") return "int " a
    if (k == "errcodes") return "int " a "[]"
    if (k == "errh") return "MPI_Errhandler " a
    return ""
}
/^#/ || NF == 0 { next }
/^%blocking/ {
    blocking = 1; fpart = $1 != "%blocking"; mpi4 = $1 == "%blocking_c4"; pm = $1 == "%blocking_pm"
    next
}
mode == "blocking" && blocking {
    params = ""; args = ""
    for (i = 3; i <= NF; i++) {
        k = $i; a = "a" i
        if ((p = cparam(k, a)) == "") {
            print "gen-calls.sh: kind " k " in " $1 " has no blocking C form" > "/dev/stderr"; exit 1
        }
        params = params ", " p
        args = args ", " a
    }
    sub(/^, /, "", params); sub(/^, /, "", args)
    fn = "int " $2 "(" params ")\n{\n    int rc;\n    VCMPI_BLOCKING" (pm ? "_PM" : "") "(rc, P" $2 "(" args "));\n    return rc;\n}\n\n"
    out = out (mpi4 ? "#if MPI_VERSION >= 4\n" fn "#endif\n\n" : fn)
    next
}
mode == "blocking" { next }
mode == "fortran" {
    name = $1; cfn = $2
    params = ""; decls = ""; post = ""; args = ""; nalloc = 0; hidden = ""
    cnt = ""; outcnt = ""; hasbuf = 0
    for (i = 3; i <= NF; i++) {
        k = $i; a = "a" i
        p = ""
        if (k == "argcv") { args = args ", NULL, NULL"; continue }
        if (k == "sbuf" || k == "rbuf") { p = "void *" a; c = "vcf_buf(" a ")"; hasbuf = 1 }
        else if (k == "int" || k == "count") { p = "MPI_Fint *" a; c = "(int)*" a; cnt = a }
        else if (k == "ints" || k == "flagsin" || k == "counts" || k == "displs" ||
                 k == "rcounts" || k == "rdispls" || k == "ncounts" || k == "ndispls") {
            p = "MPI_Fint *" a; c = "(int *)" a
        }
        else if (k == "weights") { p = "MPI_Fint *" a; c = "vcf_weights(" a ")" }
        else if (k == "flagin") { p = "MPI_Fint *" a; c = "(*" a " != 0)" }
        else if (k == "type") { p = "MPI_Fint *" a; c = "PMPI_Type_f2c(*" a ")" }
        else if (k == "op") { p = "MPI_Fint *" a; c = "PMPI_Op_f2c(*" a ")" }
        else if (k == "comm") { p = "MPI_Fint *" a; c = "PMPI_Comm_f2c(*" a ")" }
        else if (k == "win") { p = "MPI_Fint *" a; c = "PMPI_Win_f2c(*" a ")" }
        else if (k == "aint") { p = "MPI_Aint *" a; c = "*" a }
        else if (k == "baseptr") { p = "void *" a; c = a }
        else if (k == "file") { p = "MPI_Fint *" a; c = "PMPI_File_f2c(*" a ")" }
        else if (k == "offset") { p = "MPI_Offset *" a; c = "*" a }
        else if (k == "fileio" || k == "newfile") {
            p = "MPI_Fint *" a; c = "&fh" i
            decls = decls "    MPI_File fh" i " = " (k == "newfile" ? "MPI_FILE_NULL" : "PMPI_File_f2c(*" a ")") ";\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_File_c2f(fh" i ");\n"
        }
        else if (k == "group") { p = "MPI_Fint *" a; c = "PMPI_Group_f2c(*" a ")" }
        else if (k == "info") { p = "MPI_Fint *" a; c = "PMPI_Info_f2c(*" a ")" }
        else if (k == "errh") { p = "MPI_Fint *" a; c = "PMPI_Errhandler_f2c(*" a ")" }
        else if (k == "str") {
            p = "const char *" a; c = "s" i; hidden = hidden ", VCF_STRLEN " a "len"
            decls = decls "    char *s" i " = vcf_str_in(" a ", " a "len, &ok);\n"
            post = post "    free(s" i ");\n"
            nalloc++
        }
        else if (k == "argv" || k == "strs" || k == "argvs") {
            # the string arrays of spawn: CHARACTER(LEN=*) arrays (argv: ended by
            # a blank element; strs: one per command; argvs: (count, *),
            # each column ended by a blank element) as C arrays
            p = "const char *" a; c = "v" i; hidden = hidden ", VCF_STRLEN " a "len"
            if (k == "argv")
                decls = decls "    char **v" i " = vcf_argv_in(" a ", " a "len, &ok);\n"
            else
                decls = decls "    char **" (k == "argvs" ? "*" : "") "v" i " = vcf_" k "_in(" a ", *" cnt ", " a "len, &ok);\n"
            post = post "    vcf_" (k == "argvs" ? "argvs_free(v" i ", *" cnt ")" : "argv_free(v" i ")") ";\n"
            nalloc++
        }
        else if (k == "infos") {
            p = "MPI_Fint *" a; c = "v" i
            decls = decls "    MPI_Info *v" i " = vcf_infos_in(" a ", *" cnt ", &ok);\n"
            post = post "    free(v" i ");\n"
            nalloc++
        }
        else if (k == "errcodes") { p = "MPI_Fint *" a; c = "vcf_errcodes(" a ")" }
        else if (k == "commio") {
            p = "MPI_Fint *" a; c = "&c" i
            decls = decls "    MPI_Comm c" i " = PMPI_Comm_f2c(*" a ");\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_Comm_c2f(c" i ");\n"
        }
        else if (k == "reqin") { p = "MPI_Fint *" a; c = "PMPI_Request_f2c(*" a ")" }
        else if (k == "newcomm") {
            p = "MPI_Fint *" a; c = "&c" i
            decls = decls "    MPI_Comm c" i " = MPI_COMM_NULL;\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_Comm_c2f(c" i ");\n"
        } else if (k == "newwin" || k == "winio") {
            p = "MPI_Fint *" a; c = "&w" i
            decls = decls "    MPI_Win w" i " = " (k == "newwin" ? "MPI_WIN_NULL" : "PMPI_Win_f2c(*" a ")") ";\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_Win_c2f(w" i ");\n"
        } else if (k == "req") {
            p = "MPI_Fint *" a; c = "&r" i
            decls = decls "    MPI_Request r" i " = MPI_REQUEST_NULL;\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_Request_c2f(r" i ");\n"
        } else if (k == "reqio") {
            p = "MPI_Fint *" a; c = "&r" i
            decls = decls "    MPI_Request r" i " = PMPI_Request_f2c(*" a ");\n"
            post = post "    *" a " = PMPI_Request_c2f(r" i ");\n"
        } else if (k == "opio") {
            p = "MPI_Fint *" a; c = "&op" i
            decls = decls "    MPI_Op op" i " = PMPI_Op_f2c(*" a ");\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = PMPI_Op_c2f(op" i ");\n"
        } else if (k == "msg" || k == "msgio") {
            p = "MPI_Fint *" a; c = "&m" i
            decls = decls "    MPI_Message m" i " = " (k == "msg" ? "MPI_MESSAGE_NULL" : "PMPI_Message_f2c(*" a ")") ";\n"
            post = post "    if (rc == MPI_SUCCESS || " (k == "msgio") ")\n        *" a " = PMPI_Message_c2f(m" i ");\n"
        } else if (k == "status") {
            p = "MPI_Fint *" a; c = "VCF_STATUS_IGNORE(" a ") ? MPI_STATUS_IGNORE : &s" i
            decls = decls "    MPI_Status s" i ";\n    if (!VCF_STATUS_IGNORE(" a "))\n        VCF_STATUS_F2C(" a ", &s" i ");\n"
            post = post "    if ((rc == MPI_SUCCESS || VCF_STATUS_ON_ERROR) && !VCF_STATUS_IGNORE(" a "))\n        VCF_STATUS_C2F(&s" i ", " a ");\n"
        } else if (k == "flag") {
            p = "MPI_Fint *" a; c = "&f" i
            decls = decls "    int f" i " = 0;\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = f" i " ? VCF_TRUE : VCF_FALSE;\n"
        } else if (k == "intout") {
            p = "MPI_Fint *" a; c = "&o" i; outcnt = "o" i
            decls = decls "    int o" i " = 0;\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = o" i ";\n"
        } else if (k == "index") {
            p = "MPI_Fint *" a; c = "&x" i
            decls = decls "    int x" i " = MPI_UNDEFINED;\n"
            post = post "    if (rc == MPI_SUCCESS)\n        *" a " = x" i " == MPI_UNDEFINED ? x" i " : x" i " + 1;\n"
        } else if (k == "reqs") {
            p = "MPI_Fint *" a; c = "r" i
            decls = decls "    MPI_Request *r" i " = vcf_reqs_in(" a ", *" cnt ", &ok);\n"
            post = post "    vcf_reqs_out(r" i ", " a ", *" cnt ");\n"
            nalloc++
        } else if (k == "statuses") {
            p = "MPI_Fint *" a; c = "s" i
            decls = decls "    MPI_Status *s" i " = vcf_statuses_in(" a ", *" cnt ", &ok);\n"
            post = post "    vcf_statuses_out(s" i ", " a ", *" cnt ", rc);\n"
            nalloc++
        } else if (k == "indices") {
            p = "MPI_Fint *" a; c = "x" i
            decls = decls "    int *x" i " = vcf_ints_in(*" cnt ", &ok);\n"
            post = post "    vcf_indices_out(x" i ", " a ", rc == MPI_SUCCESS ? " outcnt " : 0);\n"
            nalloc++
        } else { print "gen-calls.sh: unknown kind " k " in " name > "/dev/stderr"; exit 1 }
        params = params p ", "
        args = args ", " c
    }
    sub(/^, /, "", args)
    body = ""
    # The Fortran calls of the %blocking_c and %blocking_pm lines reach MPI
    # by ways the C entry point does not see: the mpi_f08 binding of MPICH
    # calls PMPI_* directly for a call without a buffer, the bindings of
    # Open MPI always do (and under VCOLL_MPI_HOOK=0 its engine does not
    # poll vcoll). A string is CHARACTER(LEN=*): its length comes after
    # ierror, hidden (VCF_STRLEN), one per string or string array in order.
    # A baseptr there is the address MPI_Buffer_detach hands back, which
    # only mpi_f08 takes (TYPE(C_PTR)): in mpif.h it is a choice buffer MPI
    # does not write
    f08only = fpart && $0 ~ / baseptr/
    if (f08only)
        line("#ifdef VCF_F08")
    if (mpi4)
        line("#if MPI_VERSION >= 4")
    pers = cfn ~ /^VCMPI_PINIT/
    if (pers)
        line("#if VCMPI_HAVE_PCOLL")
    if (hasbuf)
        line("#ifndef VCF_NO_BUFFERS")
    line("static void vcf_" name "(" params "MPI_Fint *ierr" hidden ")")
    line("{")
    if (nalloc)
        line("    int ok = 1;")
    if (decls != "") body = body decls
    if (nalloc)
        line("    int rc = ok ? " cfn "(" args ") : MPI_ERR_NO_MEM;")
    else
        line("    int rc = " cfn "(" args ");")
    if (post != "") body = body post
    line("    if (ierr)")
    line("        *ierr = (MPI_Fint)rc;")
    line("}")
    line((pers ? "VCF_PNAMES" : "VCF_NAMES") "(vcf_" name ", " name ", " toupper((pers ? "" : "mpi_") name) ")")
    if (hasbuf)
        line("#endif")
    if (pers)
        line("#endif")
    if (mpi4)
        line("#endif")
    if (f08only)
        line("#endif")
    out = out body "\n"
    next
}
mode == "large" && $2 ~ /^VCMPI_PINIT/ { next }   # MPICH 4.0 has no _init_c forms
mode == "large" {
    name = $1; cfn = $2
    big = 0
    for (i = 3; i <= NF; i++) {
        if ($i == "count" || $i == "counts" || $i == "rcounts") big = 1
        if ($i == "ncounts") big = -1
    }
    if (big <= 0) next
    comm = ""; root = ""
    for (i = 3; i <= NF; i++) {
        if ($i == "comm") comm = "a" i
        if ($i == "int" && root == "") root = "a" i
    }
    params = ""; decls = ""; pre = ""; post = ""; args = ""; orig = ""; pend = ""
    for (i = 3; i <= NF; i++) {
        k = $i; a = "a" i; c = a
        p = cparam(k, a)
        if (k == "count") {
            p = "MPI_Count " a; c = "c" i; pend = i
            decls = decls "    int c" i " = 0, m" i " = 0;\n"
        } else if (k == "type") {
            p = "MPI_Datatype " a
            if (pend != "") {
                c = "t" i
                decls = decls "    MPI_Datatype t" i " = " a ";\n"
                pre = pre "    if (rc == MPI_SUCCESS)\n        rc = vcmpi_big(a" pend ", " a ", &c" pend ", &t" i ", &m" pend ");\n"
                post = post "    vcmpi_unbig(&t" i ", m" pend ");\n"
                pend = ""
            }
        } else if (k == "counts" || k == "displs" || k == "rcounts" || k == "rdispls") {
            p = (k ~ /counts/ ? "const MPI_Count " : "const MPI_Aint ") a "[]"; c = "v" i
            decls = decls "    int *v" i " = NULL;\n"
            cond = "rc == MPI_SUCCESS && !whole && " a
            if (k ~ /^r/) cond = cond " && vcmpi_at_root(" root ", " comm ")"
            pre = pre "    if (" cond ")\n        v" i " = vcmpi_ints_" (k ~ /counts/ ? "count" : "aint") "(" a ", vcmpi_comm_n(" comm "), &whole, &rc);\n"
            post = post "    free(v" i ");\n"
        } else if (p == "" || k ~ /^(ints|ncounts|ndispls)$/) {
            print "gen-calls.sh: kind " k " in " name " has no large-count form" > "/dev/stderr"; exit 1
        }
        params = params ", " p
        args = args ", " c
        orig = orig ", " a
    }
    sub(/^, /, "", params); sub(/^, /, "", args); sub(/^, /, "", orig)
    body = ""
    line("int " cfn "_c(" params ")")
    line("{")
    line("    int rc = MPI_SUCCESS, whole = 0;")
    body = body decls pre
    line("    if (whole)     /* an entry past INT_MAX: the MPI library _c form */")
    line("        rc = P" cfn "_c(" orig ");")
    line("    else if (rc == MPI_SUCCESS)")
    line("        rc = " cfn "(" args ");")
    body = body post
    line("    return rc;")
    line("}")
    out = out body "\n"
    next
}
mode == "persist" && $2 ~ /^VCMPI_PINIT/ {
    cfn = $2
    params = ""; args = ""
    for (i = 3; i <= NF; i++) {
        k = $i; a = "a" i
        if ((p = cparam(k, a)) == "") {
            print "gen-calls.sh: kind " k " in " $1 " has no persistent form" > "/dev/stderr"; exit 1
        }
        params = params ", " p
        if (k != "info") args = args ", " a
        else info = a
    }
    sub(/^, /, "", params); sub(/^, /, "", args)
    # <name>_init runs MPI_I<name>
    out = out "int " cfn "(" params ")\n{\n    VCMPI_PERSIST(" info ", MPI_I" substr($1, 1, length($1) - 5) "(" args "));\n}\n\n"
    next
}
mode == "persist" { next }
END {
    if (mode == "blocking") {
        printf "/* blocking.c -- generated by gen-calls.sh from calls.tab: do not edit. */\n"
        printf "#include \"vcmpi.h\"\n\n%s", out
        exit
    }
    if (mode == "persist") {
        printf "/* persist.c -- generated by gen-calls.sh from calls.tab: do not edit. */\n"
        printf "#include \"vcmpi.h\"\n\n#if VCMPI_HAVE_PCOLL\n\n%s#endif\n", out
        exit
    }
    if (mode == "fortran") {
        printf "/* fortran.c -- generated by gen-calls.sh from calls.tab: do not edit. */\n"
        printf "#include <stdlib.h>\n#include \"fortran_rt.h\"\n\n#ifdef VCF_ENABLED\n\n%s#endif\n", out
    } else {
        printf "/* large.c -- generated by gen-calls.sh from calls.tab: do not edit. */\n"
        printf "#include <stdlib.h>\n#include \"vcmpi.h\"\n\n#if MPI_VERSION >= 4\n\n%s#endif\n", out
    }
}'
