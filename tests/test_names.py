"""Region names as views show them: short C++ names, overloads told apart, control characters made visible."""

from __future__ import annotations

import pytest

from pmkit.experiment import CallTree
from pmkit.names import display_names, display_path, printable, short_name


@pytest.mark.parametrize(("name", "short"), [
    ("void CalcAccelerationForNodes(Domain&, Index_t)", "CalcAccelerationForNodes"),
    ("int main(int, char**)", "main"),
    ("MPI_Allreduce", "MPI_Allreduce"),
    ("lulesh::Domain::commRecv(int, int)", "commRecv"),
    ("std::vector<int> const& ns::Cls::get() const", "get"),
    ("unsigned long long ns::f(int)", "f"),
    ("(anonymous namespace)::helper(int)", "helper"),
    ("foo(int) [clone .constprop.0]", "foo"),
    ("foo[abi:cxx11](int)", "foo"),
    ("std::sort", "sort"),
    # templates: short arguments stay, long ones are elided
    ("void CalcElemVolumeDerivative<double>(double*, double const*)", "CalcElemVolumeDerivative<double>"),
    ("double Dot<double, 3>(double*)", "Dot<double, 3>"),
    ("void std::sort<__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > >"
     "(__gnu_cxx::__normal_iterator<int*, std::vector<int> >)", "sort<…>"),
    # constructors, destructors and operators keep their class
    ("Domain::Domain(int, int, int)", "Domain::Domain"),
    ("Domain::~Domain()", "Domain::~Domain"),
    ("ns::Tmpl<int>::Tmpl(int)", "Tmpl<int>::Tmpl"),
    ("std::vector<double, std::allocator<double> >::operator[](unsigned long)", "vector<…>::operator[]"),
    ("Foo::operator()(int) const", "Foo::operator()"),
    ("Foo::operator()() const &", "Foo::operator()"),
    ("Foo::operator->()", "Foo::operator->"),
    ("Bar<int>::operator<=>(Bar<int> const&) const", "Bar<int>::operator<=>"),
    ("Foo::operator bool() const", "Foo::operator bool"),
    ("bool operator<(Foo const&, Foo const&)", "operator<"),
    ("std::ostream& operator<<(std::ostream&, Domain const&)", "operator<<"),
    ("std::ostream& std::operator<<(std::ostream&, char)", "std::operator<<"),
    ("operator new[](unsigned long)", "operator new[]"),
    ("void operator delete(void*)", "operator delete"),
    ("lulesh::Vec3<double> lulesh::operator*<double>(lulesh::Vec3<double> const&, double)",
     "lulesh::operator*<double>"),
    ("CalcForceForNodes(Domain&)::{lambda(int)#1}::operator()(int) const", "{lambda#1}::operator()"),
    # not C++ signatures, or beyond parsing: left as they are
    ("!$omp parallel @lulesh.cc:1234", "!$omp parallel @lulesh.cc:1234"),
    ("void (*signal(int, void (*)(int)))(int)", "void (*signal(int, void (*)(int)))(int)"),
    ("a(b", "a(b"),
])
def test_short_names(name, short):
    assert short_name(name) == short


def test_parameters_tell_overloads_apart():
    assert short_name("void CalcPressure(Real_t*, Index_t) const", parameters=True) == "CalcPressure(Real_t*, Index_t)"


def test_display_names_disambiguate_siblings_and_keep_full_names_on_request():
    tree = CallTree()
    main = "int main(int, char**)"
    tree.add([main, "void f(int)"])
    tree.add([main, "void f(double)"])
    tree.add([main, "void a::g(int)"])
    tree.add([main, "void b::g(int)"])
    tree.add([main, "void h(int)", "void f(int)"])  # an f elsewhere in the tree: not a sibling, stays short
    names = display_names(tree)
    assert names == ["main", "f(int)", "f(double)", "void a::g(int)", "void b::g(int)", "h", "f"]
    assert display_path(tree, 6, names) == "main->h->f"
    assert display_names(tree, full=True)[1] == "void f(int)"


def test_printable_escapes_control_characters():
    assert printable("plain name") == "plain name"
    hostile = "evil\x1b[31mred\x1b]0;pwned\x07\u202eabc\tx\n\x9b"
    shown = printable(hostile)
    assert shown == "evil\\x1b[31mred\\x1b]0;pwned\\x07\\u202eabc\\tx\\n\\x9b"
    assert all(ch.isprintable() for ch in shown)
